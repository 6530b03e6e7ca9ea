"""Read-only shapes for the terminal's questions: ``shares/`` (like ``sshare``) and ``priority/``
(like ``sprio``, with the reason a workload waits and who is ahead). Rows come from
``queues.selectors.share_table`` and ``queues.selectors.priority``; nothing here queries."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import ResourceQuantitiesField
from core.api.serializers import FiniteFloatField
from fairshare.admission.reasons import format_score
from fairshare.types import USAGE_BASED
from queues.api.serializers.workloads import ShortageSerializer


class DominantShareSerializer(serializers.Serializer):
    ratio = FiniteFloatField(
        read_only=True, allow_null=True, help_text="max over resources of amount / entitlement (1 = its weighted part)"
    )
    resource = serializers.CharField(read_only=True, allow_null=True, help_text="The resource the ratio comes from")


def _display(help_text: str) -> serializers.ListField:
    return serializers.ListField(child=serializers.CharField(), read_only=True, help_text=help_text)


def _score(value: float | None) -> str:
    return "" if value is None else format_score(USAGE_BASED, value)


class ShareRowSerializer(serializers.Serializer):
    """One LocalQueue's fair-share standing: sshare's RawShares (the weights), NormShares
    (``normalized_share``), decayed usage, share against its entitlement and its place."""

    local_queue = serializers.CharField(source="key", read_only=True, help_text="namespace/name")
    namespace = serializers.CharField(read_only=True)
    cluster_queue = serializers.CharField(read_only=True)
    admission_mode = serializers.CharField(read_only=True, help_text="The mode in force for its ClusterQueue")
    namespace_weight = serializers.FloatField(read_only=True)
    weight = serializers.FloatField(read_only=True, help_text="The LocalQueue's weight inside its namespace")
    normalized_share = FiniteFloatField(
        read_only=True,
        allow_null=True,
        help_text="Its entitlement as a fraction of its ClusterQueue's nominal quota (namespace weight, then "
        "LocalQueue weight, over the sums of those feeding the ClusterQueue)",
    )
    entitlement = ResourceQuantitiesField(read_only=True)
    entitlement_display = _display('Its entitlement as the dashboard shows it, e.g. ["5.3 GPU", "42.7 CPU"]')
    decayed_usage = ResourceQuantitiesField(read_only=True, help_text="Half-life decayed usage at the last sample")
    decayed_usage_display = _display("Decayed usage as the dashboard shows it")
    admitted = ResourceQuantitiesField(read_only=True, help_text="Requests of its admitted workloads now")
    admitted_display = _display("Admitted requests as the dashboard shows them")
    usage_share = DominantShareSerializer(read_only=True, help_text="Decayed usage against its entitlement")
    admitted_share = DominantShareSerializer(read_only=True, help_text="Admitted requests against its entitlement")
    usage_score = FiniteFloatField(
        read_only=True,
        allow_null=True,
        help_text="KEP-4136 score at the last sample (weighted decayed usage / weight); null before the first",
    )
    usage_score_formatted = serializers.SerializerMethodField()
    pending = serializers.IntegerField(read_only=True)
    admitted_count = serializers.IntegerField(read_only=True)
    head_position = serializers.IntegerField(
        read_only=True,
        allow_null=True,
        help_text="Position of its first pending workload in its ClusterQueue at the last admission pass",
    )
    rank = serializers.IntegerField(
        read_only=True,
        allow_null=True,
        help_text="Its place among the LocalQueues with pending work in its ClusterQueue (1 = tried first)",
    )
    ranked = serializers.IntegerField(read_only=True, help_text="How many LocalQueues with pending work were ranked")

    @extend_schema_field(OpenApiTypes.STR)
    def get_usage_score_formatted(self, row: Any) -> str:
        return _score(row.usage_score)


class AheadSerializer(serializers.Serializer):
    local_queue = serializers.SerializerMethodField(
        help_text='namespace/name, or "another tenant\'s queues" for queues the caller may not see'
    )
    same_local_queue = serializers.SerializerMethodField()
    count = serializers.IntegerField(read_only=True, help_text="Its pending workloads ahead")
    why = serializers.CharField(read_only=True, help_text="Why that queue's work ranks first")

    @extend_schema_field(OpenApiTypes.STR)
    def get_local_queue(self, item: Any) -> str:
        return f"{item.namespace}/{item.name}" if item.name else item.label

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_same_local_queue(self, item: Any) -> bool:
        return item.label == "the same LocalQueue"


class WaitReasonSerializer(serializers.Serializer):
    code = serializers.CharField(
        source="reason_code", read_only=True, help_text="Machine-readable, e.g. InsufficientQuota"
    )
    title = serializers.CharField(source="reason_title", read_only=True)
    message = serializers.CharField(
        source="reason", read_only=True, help_text="The engine's sentence, redacted for tenants"
    )
    shortages = ShortageSerializer(
        many=True, read_only=True, help_text="Every short resource the message names, dominant first"
    )


class PriorityFactorsSerializer(serializers.Serializer):
    priority = serializers.IntegerField(source="row.priority", read_only=True)
    priority_class = serializers.CharField(read_only=True)
    namespace_weight = serializers.FloatField(read_only=True)
    local_queue_weight = serializers.FloatField(read_only=True)
    usage_score = FiniteFloatField(read_only=True, allow_null=True, help_text="Its LocalQueue's KEP-4136 score")
    usage_score_formatted = serializers.SerializerMethodField()
    queued_at = serializers.DateTimeField(source="row.queued_at", read_only=True, help_text="The FIFO key")

    @extend_schema_field(OpenApiTypes.STR)
    def get_usage_score_formatted(self, row: Any) -> str:
        return _score(row.usage_score)


class PriorityRowSerializer(serializers.Serializer):
    """A workload as ``sprio`` shows a job, plus the reason it waits and who is ahead of it."""

    id = serializers.IntegerField(source="row.id", read_only=True)
    workload = serializers.CharField(read_only=True, help_text="namespace/name")
    local_queue = serializers.CharField(read_only=True, help_text="namespace/name")
    cluster_queue = serializers.CharField(source="row.cluster_queue", read_only=True)
    state = serializers.CharField(source="row.state", read_only=True)
    admission_mode = serializers.CharField(read_only=True)
    requests = serializers.ListField(
        source="row.requests",
        child=serializers.CharField(),
        read_only=True,
        help_text='Total, e.g. ["2 nvidia.com/gpu"]',
    )
    factors = PriorityFactorsSerializer(source="*", read_only=True)
    queue_position = serializers.IntegerField(
        source="row.position", read_only=True, allow_null=True, help_text="1-based, in its ClusterQueue (pending only)"
    )
    queue_position_state = serializers.CharField(
        source="row.position_state",
        read_only=True,
        allow_null=True,
        help_text="ranked (by the last admission pass) or estimated (not seen by a pass yet), as on workloads/",
    )
    reason = serializers.SerializerMethodField(help_text="Why it waits; null unless pending")
    ahead = AheadSerializer(many=True, read_only=True, help_text="Pending work ahead of it, per LocalQueue")
    ahead_more = serializers.IntegerField(
        source="row.ahead_more", read_only=True, help_text="Workloads ahead in LocalQueues not listed"
    )

    @extend_schema_field(WaitReasonSerializer(allow_null=True))
    def get_reason(self, row: Any) -> dict[str, Any] | None:
        if row.row.state != "Pending":
            return None
        return dict(WaitReasonSerializer(row.row).data)
