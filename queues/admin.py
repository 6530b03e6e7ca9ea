"""Django admin for every model: list columns, filters, search; policy saves are audited."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest

from core.admin_base import WrittenElsewhereAdmin
from core.audit import AuditedAdmin
from core.formatting import format_for_humans
from queues import services
from queues.fields import QuantityFormField
from queues.models import (
    BackendHealth,
    Cluster,
    ClusterJob,
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    LocalQueue,
    Namespace,
    NamespaceQuota,
    ResourceFlavor,
    Workload,
    WorkloadPriorityClass,
    WorkloadResource,
    WorkloadState,
)
from queues.services import usage_counters
from queues.services.policy import apply_stop_rule

admin.site.site_header = "fairportal administration"
admin.site.site_title = "fairportal"


class ResourceAwareQuotaForm(forms.ModelForm):
    """Shows stored millis back in the notation that suits the row's resource (64Gi, 500m)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        resource = getattr(self.instance, "resource", "") or ""
        for field in self.fields.values():
            if isinstance(field, QuantityFormField):
                field.resource = resource


class ClusterQueueQuotaInline(admin.TabularInline):
    model = ClusterQueueQuota
    form = ResourceAwareQuotaForm
    extra = 1
    fields = ("flavor_order", "flavor", "resource", "nominal", "borrowing_limit", "lending_limit")


class CohortQuotaInline(admin.TabularInline):
    model = CohortQuota
    form = ResourceAwareQuotaForm
    extra = 0
    fields = ("flavor", "resource", "nominal", "borrowing_limit", "lending_limit")


class NamespaceQuotaInline(admin.TabularInline):
    model = NamespaceQuota
    form = ResourceAwareQuotaForm
    extra = 1
    fields = ("resource", "hard")


def _usage_text(consumed: dict[str, float]) -> str:
    return ", ".join(f"{name}={format_for_humans(round(value), name)}" for name, value in sorted(consumed.items()))


@admin.register(Cluster)
class ClusterAdmin(AuditedAdmin):
    """Clusters and their connections (never a secret: ``rest_secret`` names where the token is).
    The default cluster's backend and connection come from the settings; it cannot be deleted."""

    list_display = ("name", "effective_backend", "enabled", "from_settings", "health_text", "flavor_count")
    list_filter = ("backend", "enabled")
    search_fields = ("name", "description")
    readonly_fields = ("from_settings", "health_text", "created_at")
    fieldsets = (
        (None, {"fields": ("name", "description", "backend", "enabled", "from_settings", "health_text")}),
        ("Slurm, command-line tools", {"fields": ("slurm_transport", "slurm_bin_dir", "slurm_conf")}),
        ("Slurm, slurmrestd", {"fields": ("rest_url", "rest_secret", "rest_user")}),
        ("Maps", {"fields": ("flavor_partitions", "account_queues")}),
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Cluster]:
        return super().get_queryset(request).select_related("health").annotate(flavors_n=Count("flavors"))

    @admin.display(description="backend")
    def effective_backend(self, obj: Cluster) -> str:
        return obj.effective_backend + (" (CLUSTER_BACKEND)" if obj.from_settings else "")

    @admin.display(description="flavors")
    def flavor_count(self, obj: Cluster) -> int:
        return getattr(obj, "flavors_n", 0)

    @admin.display(description="health")
    def health_text(self, obj: Cluster) -> str:
        try:
            row = obj.health
        except BackendHealth.DoesNotExist:
            return "no call yet"
        if row.reachable:
            return "reachable"
        since = f" since {row.unreachable_since:%Y-%m-%d %H:%M:%S}Z" if row.unreachable_since else ""
        return f"unreachable{since} ({row.failures} failed calls): {row.last_error}"

    def has_delete_permission(self, request: HttpRequest, obj: Cluster | None = None) -> bool:
        return super().has_delete_permission(request, obj) and not (obj is not None and obj.from_settings)


@admin.register(ResourceFlavor)
class ResourceFlavorAdmin(AuditedAdmin):
    list_display = ("name", "cluster", "description", "created_at")
    list_filter = ("cluster",)
    search_fields = ("name", "description")
    list_select_related = ("cluster",)


@admin.register(Cohort)
class CohortAdmin(AuditedAdmin):
    list_display = ("name", "parent", "weight", "admission_mode", "cluster_queue_count")
    list_filter = ("admission_mode",)
    search_fields = ("name", "description")
    inlines = [CohortQuotaInline]
    readonly_fields = ("consumed_resources", "usage_last_update", "weighted_share")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Cohort]:
        return super().get_queryset(request).select_related("parent").annotate(cq_count=Count("cluster_queues"))

    @admin.display(description="ClusterQueues", ordering="cq_count")
    def cluster_queue_count(self, obj: Cohort) -> int:
        return obj.cq_count  # type: ignore[attr-defined]


@admin.register(ClusterQueue)
class ClusterQueueAdmin(AuditedAdmin):
    list_display = (
        "name",
        "cohort",
        "weight",
        "queueing_strategy",
        "admission_mode",
        "stop_policy",
        "local_queue_count",
        "pending_count",
    )
    list_filter = ("cohort", "queueing_strategy", "admission_mode", "stop_policy")
    search_fields = ("name", "description")
    inlines = [ClusterQueueQuotaInline]
    readonly_fields = ("consumed_resources", "entry_penalty", "usage_last_update", "weighted_share")

    def get_queryset(self, request: HttpRequest) -> QuerySet[ClusterQueue]:
        return (
            super()
            .get_queryset(request)
            .select_related("cohort")
            .annotate(
                lq_count=Count("local_queues", distinct=True),
                pending=Count(
                    "local_queues__workloads",
                    filter=Q(local_queues__workloads__state=WorkloadState.PENDING),
                    distinct=True,
                ),
            )
        )

    @admin.display(description="LocalQueues", ordering="lq_count")
    def local_queue_count(self, obj: ClusterQueue) -> int:
        return obj.lq_count  # type: ignore[attr-defined]

    @admin.display(description="Pending", ordering="pending")
    def pending_count(self, obj: ClusterQueue) -> int:
        return obj.pending  # type: ignore[attr-defined]


@admin.register(Namespace)
class NamespaceAdmin(AuditedAdmin):
    list_display = ("name", "weight", "hard_quota_text", "preemption_within_namespace", "local_queue_count")
    search_fields = ("name", "description")
    inlines = [NamespaceQuotaInline]
    readonly_fields = ("consumed_resources", "usage_last_update", "weighted_share")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Namespace]:
        return super().get_queryset(request).prefetch_related("quotas").annotate(lq_count=Count("local_queues"))

    @admin.display(description="Hard quota")
    def hard_quota_text(self, obj: Namespace) -> str:
        return ", ".join(f"{row.resource}={format_for_humans(row.hard, row.resource)}" for row in obj.quotas.all())

    @admin.display(description="LocalQueues", ordering="lq_count")
    def local_queue_count(self, obj: Namespace) -> int:
        return obj.lq_count  # type: ignore[attr-defined]


@admin.register(LocalQueue)
class LocalQueueAdmin(AuditedAdmin):
    list_display = ("__str__", "cluster_queue", "weight", "stop_policy", "decayed_usage", "weighted_share")
    list_filter = ("cluster_queue", "stop_policy", "namespace")
    search_fields = ("name", "namespace__name", "cluster_queue__name")
    readonly_fields = (
        "stop_level",
        "stopped_by",
        "consumed_resources",
        "entry_penalty",
        "usage_last_update",
        "weighted_share",
    )
    list_select_related = ("namespace", "cluster_queue")

    @admin.display(description="Decayed usage")
    def decayed_usage(self, obj: LocalQueue) -> str:
        return _usage_text(obj.consumed_resources or {})

    def save_model(self, request: HttpRequest, obj: LocalQueue, form: Any, change: bool) -> None:  # type: ignore[override]  # handed LocalQueues only
        apply_stop_rule(obj, actor=request.user)  # an admin's stop: only admins lift it
        super().save_model(request, obj, form, change)


class WorkloadAdminForm(forms.ModelForm):
    class Meta:
        model = Workload
        fields = "__all__"  # noqa: DJ007 - the admin edits every field of a workload


class WorkloadResourceInline(admin.TabularInline):
    model = WorkloadResource
    extra = 0
    can_delete = False
    readonly_fields = ("resource", "amount", "flavor")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Workload)
class WorkloadAdmin(admin.ModelAdmin):
    form = WorkloadAdminForm
    list_display = (
        "name",
        "namespace",
        "local_queue",
        "state",
        "priority",
        "queued_at",
        "admitted_at",
        "queue_position",
        "pending_reason_code",
    )
    list_filter = ("state", "reason__code", "local_queue__cluster_queue", "namespace")
    search_fields = ("name", "namespace__name", "local_queue__name", "reason__message")
    list_select_related = ("namespace", "local_queue__namespace", "reason", "reason__behind")
    date_hierarchy = "queued_at"
    inlines = [WorkloadResourceInline]
    readonly_fields = (
        "admitted_at",
        "started_at",
        "finished_at",
        "cluster_queue",
        "flavor_assignment",
        "wall_time_seconds",
        "accumulated_past_execution_seconds",
        "eviction_count",
        "last_evicted_at",
        "last_eviction_reason",
        "pending_reason_code",
        "pending_reason_message",
        "queue_position",
    )

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).with_queue_position()  # type: ignore[attr-defined]  # Workload.objects is a WorkloadQuerySet manager

    @admin.display(ordering="queue_position", description="queue position")
    def queue_position(self, obj: Workload) -> int | None:
        """The last pass's rank, as annotated (the API and the pages add estimates for the
        workloads no pass has seen yet; the admin list stays one query)."""
        return obj.__dict__.get("_queue_position")

    def save_model(self, request: HttpRequest, obj: Workload, form: Any, change: bool) -> None:
        """Saved, its resource rows rebuilt, and the counters (admitted usage, admitted and
        pending counts) of its LocalQueue, and of the one it left, recounted from the rows: an
        admin may set any state or LocalQueue by hand."""
        with transaction.atomic():
            before = (
                Workload.objects.filter(pk=obj.pk).values_list("local_queue_id", flat=True).first() if change else None
            )
            super().save_model(request, obj, form, change)
            services.sync_workload_resources(obj)
            usage_counters.recount([obj.local_queue_id, before])

    def delete_model(self, request: HttpRequest, obj: Workload) -> None:
        with transaction.atomic():
            super().delete_model(request, obj)
            usage_counters.recount([obj.local_queue_id])

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Workload]) -> None:
        with transaction.atomic():
            touched = set(queryset.values_list("local_queue_id", flat=True))
            super().delete_queryset(request, queryset)
            usage_counters.recount(touched)


@admin.register(WorkloadPriorityClass)
class WorkloadPriorityClassAdmin(AuditedAdmin):
    """Kueue's named priorities (imported and exported with the Kueue manifests)."""

    list_display = ("name", "value", "description")
    search_fields = ("name", "description")
    readonly_fields = ("kueue_extra",)


@admin.register(ClusterJob)
class ClusterJobAdmin(WrittenElsewhereAdmin):
    """Links between cluster jobs (Slurm job ids) and workloads. Deleting a rejected job's row
    lets the next sync try to import it again (after the LocalQueue it names was created)."""

    list_display = ("external_id", "cluster", "backend", "workload", "error", "settled", "created_at")
    list_filter = ("cluster", "settled")
    search_fields = ("external_id", "error")
    readonly_fields = ("cluster", "backend", "external_id", "workload", "error", "settled", "created_at")


@admin.register(BackendHealth)
class BackendHealthAdmin(WrittenElsewhereAdmin):
    """Whether the cluster answered; written by the control loop only."""

    list_display = (
        "cluster",
        "backend",
        "reachable",
        "failures",
        "unreachable_since",
        "retry_at",
        "last_ok_at",
        "last_error",
    )
