"""Policy objects: resource flavors, cohorts, ClusterQueues, namespaces and LocalQueues.

Related objects are named, not numbered (``"cohort": "org"``, ``"flavor": "a100"``), as in
Kueue's YAML; ids appear in URLs only.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.api.fields import (
    LABEL_VALUE,
    FormattedQuantityField,
    FormattedResourcesField,
    NameField,
    QuantityField,
    ResourceQuantitiesField,
    validate_node_labels,
)
from core.validators import validate_resource_name
from queues.api.serializers.base import PolicySerializer
from queues.api.serializers.common import FairSharingStatusSerializer
from queues.models import (
    Cluster,
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    LocalQueue,
    Namespace,
    NamespaceQuota,
    ResourceFlavor,
    WorkloadPriorityClass,
)
from queues.models.namespace import MAX_PRIORITY_CLASSES

MAX_QUOTA_ROWS = 64


class QueueCountsMixin(serializers.Serializer):
    """A queue that workloads wait in and run from: its fair-sharing status and its counts."""

    status = FairSharingStatusSerializer(source="*", read_only=True)
    pending_workloads = serializers.IntegerField(source="pending_count", read_only=True)
    admitted_workloads = serializers.IntegerField(source="admitted_count", read_only=True)


class ResourceFlavorSerializer(PolicySerializer[ResourceFlavor]):
    cluster = NameField(
        queryset=Cluster.objects.all(),
        required=False,
        help_text="The cluster whose capacity it is (default: the installation's default cluster)",
    )
    node_labels = serializers.DictField(
        child=serializers.CharField(max_length=63, allow_blank=True, validators=[LABEL_VALUE]),
        required=False,
        validators=[validate_node_labels],  # type: ignore[list-item]  # a validator returning its errors; DRF ignores the return value
        help_text="Kueue nodeLabels, kept for export",
    )

    class Meta:
        model = ResourceFlavor
        fields = ["id", "name", "cluster", "description", "node_labels", "created_at"]


class QuotaRowSerializer(serializers.Serializer):
    """One flavor/resource row: nominal quota with optional borrowing and lending limits."""

    flavor = NameField(queryset=ResourceFlavor.objects.all())
    resource = serializers.CharField(max_length=253, validators=[validate_resource_name])
    nominal = QuantityField(help_text='Guaranteed amount: 16, "500m", "64Gi"')
    nominal_formatted = FormattedQuantityField("nominal")
    borrowing_limit = QuantityField(
        required=False, allow_null=True, default=None, help_text="Most it may borrow; null = unlimited"
    )
    borrowing_limit_formatted = FormattedQuantityField("borrowing_limit", allow_null=True)
    lending_limit = QuantityField(
        required=False, allow_null=True, default=None, help_text="Most it lends out; null = all unused"
    )
    lending_limit_formatted = FormattedQuantityField("lending_limit", allow_null=True)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """A row is always whole, even in a PATCH (where DRF would skip missing nested fields):
        the rows sent replace the stored ones."""
        missing = [name for name in ("flavor", "resource", "nominal") if name not in attrs]
        if missing:
            raise serializers.ValidationError({name: ["This field is required."] for name in missing})
        return attrs


def quota_rows_field(help_text: str) -> QuotaRowSerializer:
    return QuotaRowSerializer(many=True, required=False, max_length=MAX_QUOTA_ROWS, help_text=help_text)  # type: ignore[call-arg]  # ListSerializer takes max_length with many=True


class CohortSerializer(PolicySerializer[Cohort]):
    quotas_field = "quotas"
    parent = NameField(queryset=Cohort.objects.all(), allow_null=True, required=False)  # type: ignore[assignment]  # a field named like Field.parent, as the model's
    quotas = quota_rows_field("Quota the cohort owns itself, shared by its members")
    status = FairSharingStatusSerializer(source="*", read_only=True)

    class Meta:
        model = Cohort
        fields = ["id", "name", "parent", "weight", "admission_mode", "description", "quotas", "status", "created_at"]

    def build_quota_rows(self, instance: Cohort, rows: list[dict[str, Any]]) -> list[CohortQuota]:
        return [CohortQuota(**row) for row in rows]


class ClusterQueueSerializer(QueueCountsMixin, PolicySerializer[ClusterQueue]):
    quotas_field = "quotas"
    cohort = NameField(queryset=Cohort.objects.all(), allow_null=True, required=False)
    quotas = quota_rows_field(
        "Rows in flavor order: the order in which flavors first appear is the order they are tried"
    )

    class Meta:
        model = ClusterQueue
        fields = [
            "id",
            "name",
            "cohort",
            *ClusterQueue.POLICY_FIELDS,
            "quotas",
            "status",
            "pending_workloads",
            "admitted_workloads",
            "created_at",
        ]

    def build_quota_rows(self, instance: ClusterQueue, rows: list[dict[str, Any]]) -> list[ClusterQueueQuota]:
        """Rank flavors by first appearance, as Kueue tries a ClusterQueue's flavors in order."""
        order: dict[int, int] = {}
        for row in rows:
            order.setdefault(row["flavor"].pk, len(order))
        return [ClusterQueueQuota(flavor_order=order[row["flavor"].pk], **row) for row in rows]


class NamespaceSerializer(PolicySerializer[Namespace]):
    quotas_field = "hard_quota"
    hard_quota = ResourceQuantitiesField(
        required=False,
        help_text='Like a Kubernetes ResourceQuota: admitted usage never exceeds these, e.g. {"cpu": 64}',
    )
    hard_quota_formatted = FormattedResourcesField(lambda namespace: namespace.hard_quota())
    status = FairSharingStatusSerializer(source="*", read_only=True)
    allowed_priority_classes = serializers.ListField(
        child=serializers.CharField(max_length=63),
        max_length=MAX_PRIORITY_CLASSES,
        required=False,
        help_text="WorkloadPriorityClass names its tenants may submit with (the default is always allowed)",
    )
    default_priority_class = NameField(
        queryset=WorkloadPriorityClass.objects.all(),
        required=False,
        allow_null=True,
        help_text="The class of a submission that names none; null: priority 0",
    )

    class Meta:
        model = Namespace
        fields = [
            "id",
            "name",
            "weight",
            "preemption_within_namespace",
            "allowed_priority_classes",
            "default_priority_class",
            "description",
            "hard_quota",
            "hard_quota_formatted",
            "status",
            "created_at",
        ]

    def build_quota_rows(self, instance: Namespace, hard: dict[str, int]) -> list[NamespaceQuota]:
        return [NamespaceQuota(resource=resource, hard=amount) for resource, amount in hard.items()]


class LocalQueueSerializer(QueueCountsMixin, PolicySerializer[LocalQueue]):
    stop_level = serializers.CharField(
        read_only=True, help_text="Who set the stop: admin or editor (only that level or higher lifts it); empty: none"
    )
    stopped_by = serializers.CharField(read_only=True, help_text="User who set the stop; empty: none or the system")
    namespace = NameField(queryset=Namespace.objects.all())
    cluster_queue = NameField(queryset=ClusterQueue.objects.all())
    key = serializers.CharField(read_only=True, help_text="namespace/name")

    class Meta:
        model = LocalQueue
        fields = [
            "id",
            "key",
            "namespace",
            "name",
            "cluster_queue",
            "weight",
            "stop_policy",
            "stop_level",
            "stopped_by",
            "description",
            "status",
            "pending_workloads",
            "admitted_workloads",
            "created_at",
        ]
