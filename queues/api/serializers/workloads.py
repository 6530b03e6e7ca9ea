"""Workloads: the submission an executor or a tenant's script sends, and the status it polls."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request

from core.api.fields import FormattedResourcesField, ResourceQuantitiesField
from core.api.permissions import request_access, request_redactor
from core.validators import validate_dns_label
from fairshare.quantities import MAX_MILLIS
from queues.api.fields import LocalQueueKeyField
from queues.models import Workload
from queues.models.workload import (
    MAX_POD_COUNT,
    MAX_POD_SETS,
    POSITION_ESTIMATED,
    POSITION_HELD,
    POSITION_RANKED,
    total_requests,
)
from queues.selectors import reasons
from queues.services.workloads import resolve_priority

INT32_MAX = 2**31 - 1


def visible_local_queues(queryset: QuerySet, request: Request) -> QuerySet:
    """A tenant may only name LocalQueues of its own namespaces; others do not exist for it."""
    return request_access(request).visible_to(queryset)


class PodSetSerializer(serializers.Serializer):
    """``count`` pods, each requesting ``requests``."""

    name = serializers.CharField(
        max_length=63,
        required=False,
        validators=[validate_dns_label],
        help_text="Unique within the workload; default main, set-1, ...",
    )
    count = serializers.IntegerField(min_value=1, max_value=MAX_POD_COUNT, default=1)
    requests = ResourceQuantitiesField(
        allow_empty=False, help_text='Per pod, e.g. {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": 1}'
    )
    requests_formatted = FormattedResourcesField(lambda pod_set: pod_set["requests"])


@extend_schema_field(OpenApiTypes.NUMBER)
class BaseUnitsField(serializers.Field):
    """A base-unit number as ``queues.selectors.reasons.shortages`` made it (int when whole)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["read_only"] = True
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> Any:
        return value


class ShortageSerializer(serializers.Serializer):
    """One resource the workload lacks in its ClusterQueue (``queues.selectors.reasons.shortages``)."""

    resource = serializers.CharField(read_only=True)
    flavor = serializers.CharField(
        read_only=True, allow_null=True, help_text="The flavor the reason names; null: no flavor has quota for it"
    )
    requested = BaseUnitsField(help_text="Base units (cores, bytes, GPUs)")
    requested_formatted = serializers.CharField(read_only=True)
    available = BaseUnitsField(help_text="Free for it now in that flavor")
    available_formatted = serializers.CharField(read_only=True)
    missing = BaseUnitsField(help_text="requested - available")
    missing_formatted = serializers.CharField(read_only=True)
    ceiling = BaseUnitsField(help_text="The most the ClusterQueue could ever get of it there")
    ceiling_formatted = serializers.CharField(read_only=True)
    never_fits = serializers.BooleanField(
        read_only=True, help_text="Waiting will not help: over the ceiling, or no flavor"
    )


class PendingReasonSerializer(serializers.Serializer):
    code = serializers.CharField(source="pending_reason_code", help_text="Machine-readable, e.g. InsufficientQuota")
    message = serializers.CharField(
        source="pending_reason_message",
        help_text="The engine's sentence: every short resource with its amounts, the dominant one first",
    )
    shortages = serializers.SerializerMethodField(
        help_text="Every short resource the message names, dominant first (InsufficientQuota and "
        "WaitingForFairShare; [] for the other codes)"
    )
    by_reference = serializers.BooleanField(
        source="pending_reason_by_reference",
        help_text="Explained by reference to the first workload of its ClusterQueue waiting for quota "
        "(past the first ADMISSION_EXPLAINED_PER_QUEUE): the message quotes that workload's reason, and "
        "shortages are that workload's",
    )

    @extend_schema_field(ShortageSerializer(many=True))
    def get_shortages(self, workload: Workload) -> list[dict[str, Any]]:
        return list(ShortageSerializer(reasons.shortages(workload.pending_reason_shortages), many=True).data)


@extend_schema_field(PendingReasonSerializer(allow_null=True))
class PendingReasonField(serializers.Field):
    """Null unless the admission pass left a reason."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.update(source="*", read_only=True, allow_null=True)
        super().__init__(**kwargs)

    def to_representation(self, workload: Workload) -> dict[str, str] | None:
        if not workload.pending_reason_code and not workload.pending_reason_message:
            return None
        data = PendingReasonSerializer(workload).data
        request = self.context.get("request")
        if request is not None:
            data["message"] = request_redactor(request)(data["message"])
        return data


class WorkloadSubmitSerializer(serializers.Serializer):
    """What a client sends to submit a workload."""

    name = serializers.CharField(max_length=63, validators=[validate_dns_label], help_text="Unique in the namespace")
    local_queue = LocalQueueKeyField(scope=visible_local_queues, help_text="namespace/name")
    priority_class = serializers.CharField(
        max_length=63,
        required=False,
        validators=[validate_dns_label],
        help_text="A WorkloadPriorityClass the namespace allows (Kueue's priorityClassName); default: the "
        "namespace's default class",
    )
    priority = serializers.IntegerField(
        min_value=-INT32_MAX - 1,
        max_value=INT32_MAX,
        required=False,
        help_text="Admins only: a raw priority instead of a class (refused from tenants and executors)",
    )
    pod_sets = PodSetSerializer(many=True, min_length=1, max_length=MAX_POD_SETS)  # type: ignore[call-arg]  # ListSerializer takes min_length/max_length with many=True
    duration_seconds = serializers.IntegerField(
        min_value=0,
        max_value=INT32_MAX,
        required=False,
        allow_null=True,
        help_text="Declared run time; the built-in simulated cluster finishes it after this long",
    )
    max_runtime_seconds = serializers.IntegerField(min_value=0, max_value=INT32_MAX, required=False, allow_null=True)
    command = serializers.CharField(
        max_length=4096,
        required=False,
        write_only=True,
        help_text="CLUSTER_BACKEND=slurm: the shell command the job runs (a held sbatch --wrap job, released "
        "when admitted, with the requests as one task); refused by backends that run no commands",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """Priority is policy: the class decides it (``resolve_priority``)."""
        request = self.context.get("request")
        is_admin = request is not None and request_access(request).is_admin
        try:
            attrs["priority"], attrs["priority_class"] = resolve_priority(
                attrs["local_queue"],
                priority_class=attrs.get("priority_class"),
                priority=attrs.get("priority"),
                is_admin=is_admin,
            )
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.message_dict) from None
        return attrs

    def validate_pod_sets(self, pod_sets: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for resource, total in total_requests(pod_sets).items():
            if total > MAX_MILLIS:
                raise serializers.ValidationError(f"the total request of {resource} (count x requests) is too large")
        return pod_sets


class WorkloadSerializer(serializers.ModelSerializer):
    """A workload's status: where it is, why it waits, what it was given, how long it ran."""

    namespace = serializers.CharField(source="namespace.name", read_only=True)
    local_queue = serializers.CharField(source="local_queue.key", read_only=True, help_text="namespace/name")
    cluster_queue = serializers.SerializerMethodField(help_text="Where it waits, or where it was admitted")
    cluster = serializers.SerializerMethodField(help_text="The cluster it runs or last ran on (null before that)")
    pod_sets = PodSetSerializer(many=True, read_only=True)
    total_requests = ResourceQuantitiesField(source="requests", read_only=True)
    total_requests_formatted = FormattedResourcesField(lambda workload: workload.requests)
    pending_reason = PendingReasonField(help_text="Why it is pending; null when there is no reason to report")
    queue_position = serializers.IntegerField(
        read_only=True,
        allow_null=True,
        help_text="1-based place in its ClusterQueue (pending only): the last admission pass's, or, "
        "until a pass has seen it, where the next one will most likely put it (queue_position_state)",
    )
    queue_position_state = serializers.ChoiceField(
        choices=[POSITION_RANKED, POSITION_ESTIMATED, POSITION_HELD],
        read_only=True,
        allow_null=True,
        help_text="ranked: by the last admission pass; estimated: submitted or requeued since, placed by "
        "its LocalQueue's order (priority, queue time, name) among the ranked ones; held: an admission "
        "gate (budgets' safe admission) keeps it out of line, no position, the reason says why; null "
        "unless pending",
    )
    wall_time_seconds = serializers.IntegerField(
        source="current_wall_time_seconds", read_only=True, help_text="Of the current admission (so far, while it runs)"
    )
    total_wall_time_seconds = serializers.IntegerField(read_only=True, help_text="All admissions together")
    flavor_assignment = serializers.DictField(
        child=serializers.CharField(), read_only=True, help_text="Resource -> flavor, once admitted"
    )

    class Meta:
        model = Workload
        fields = [
            "id",
            "name",
            "namespace",
            "local_queue",
            "cluster_queue",
            "cluster",
            "priority",
            "priority_class",
            "state",
            "queue_position",
            "queue_position_state",
            "pending_reason",
            "pod_sets",
            "total_requests",
            "total_requests_formatted",
            "flavor_assignment",
            "created_at",
            "queued_at",
            "admitted_at",
            "started_at",
            "finished_at",
            "duration_seconds",
            "max_runtime_seconds",
            "wall_time_seconds",
            "accumulated_past_execution_seconds",
            "total_wall_time_seconds",
            "eviction_count",
            "last_evicted_at",
            "last_eviction_reason",
        ]
        read_only_fields = fields

    def get_cluster_queue(self, workload: Workload) -> str:
        return (workload.cluster_queue or workload.local_queue.cluster_queue).name

    def get_cluster(self, workload: Workload) -> str | None:
        return workload.cluster.name if workload.cluster is not None else None

    def to_representation(self, instance: Workload) -> dict[str, Any]:
        """Reasons name other tenants' workloads and queues; a tenant reads them anonymised."""
        data = super().to_representation(instance)
        request = self.context.get("request")
        if request is not None:
            data["last_eviction_reason"] = request_redactor(request)(data["last_eviction_reason"])
        return data


class LifecycleReportSerializer(serializers.Serializer):
    """The optional body of ``finish``, ``fail`` and ``cancel``."""

    message = serializers.CharField(
        max_length=300,
        required=False,
        allow_blank=True,
        default="",
        help_text="Why it ended, e.g. OOMKilled; kept with the admission interval",
    )
