"""Detail pages of one cohort, ClusterQueue, namespace or LocalQueue: facts, state and history.

Each returns None when the viewer may not see the object (the view answers 404), so another
tenant's queue is indistinguishable from one that does not exist. Charts come from the queue's
own usage series; entitlement uses today's weights and quotas (the help text says so).

The cohort, ClusterQueue and namespace pages read their admitted usage and workload counts from
the cluster-wide aggregates shared between viewers for a few seconds (``live.shared``), as the
tree below them on the same page does, folded to the page's own queue in Python with the page's
structure: never another queue's figures, whoever looks, and no aggregate of their own (``admitted``:
the page's copy of the shared admitted usage, which its tree folds too). The LocalQueue page,
which has no tree, keeps its own narrowed and fresh aggregate.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q, Sum

from core.access import Access
from core.models import PolicyChange
from queues.models import (
    ClusterQueue,
    Cohort,
    LocalQueue,
    Namespace,
    NamespaceQuota,
    UsageSample,
    WorkloadResource,
    WorkloadState,
)
from queues.selectors import analytics, history, live
from queues.selectors.audit_log import ChangeRow, change_markers, change_rows
from queues.selectors.shares import NO_SHARE, Share, per_resource, usage_fields
from queues.selectors.structure import ClusterStructure
from queues.ui import charts
from queues.ui.display import amount, amounts, duration, resource_order

Kind = UsageSample.Kind
RECENT_CHANGES = 8


@dataclass
class QuotaRow:
    flavor: str
    resource: str
    nominal: int | None
    borrowing_limit: int | None = None
    lending_limit: int | None = None
    used: int = 0

    @property
    def borrowed(self) -> int:
        return max(0, self.used - (self.nominal or 0))

    @property
    def share(self) -> Share:
        return Share(self.used / self.nominal, self.resource) if self.nominal else NO_SHARE

    def text(self, name: str) -> str:
        value = getattr(self, name)
        return (
            "unlimited"
            if value is None and name == "borrowing_limit"
            else ("all unused" if value is None and name == "lending_limit" else amount(value, self.resource))
        )


@dataclass
class QueueDetail:
    """What every detail page shows: facts, now, and the figures over ``range``."""

    obj: Any
    kind: str
    mode: str = ""
    scope: str = ""
    allocated: list[str] = field(default_factory=list)
    decayed: list[str] = field(default_factory=list)
    entitlement: list[str] = field(default_factory=list)
    share: Share = NO_SHARE
    usage_share: Share = NO_SHARE
    admitted: int = 0
    pending: int = 0
    quotas: list[QuotaRow] = field(default_factory=list)
    holds: list[live.HoldView] = field(default_factory=list)
    budgets: list[Any] = field(default_factory=list)
    changes: list[ChangeRow] = field(default_factory=list)
    figures: dict[str, charts.Figure] = field(default_factory=dict)
    window: history.Window | None = None  # the one window of every time chart on the page
    can_edit: bool = False


def _figures(
    viewer: Access,
    range_name: str,
    series_kind: str,
    object_type: str,
    object_id: int,
    entitlement: dict[str, float],
    admissions: Q,
    *,
    show_changes: bool = True,
    limit_series: bool = False,
    limit: dict[str, float] | None = None,
    limit_name: str = "Nominal quota",
) -> dict[str, Any]:
    """A queue page's ``figures`` and their one ``window`` (from the queue's first sample in
    ``range_name``): its stored series (``series_kind``), the waits of ``admissions`` in the same
    window, and its policy changes as markers (``object_type``, unless not ``show_changes``)."""
    window = history.page_window(range_name, [(series_kind, object_id)])
    series = history.object_series(series_kind, object_id, window.start)
    markers = change_markers(viewer, window.start, object_type=object_type, object_id=object_id) if show_changes else []
    if limit_series:
        limits = series.capacity
    else:
        limits = {r: [v] * len(series.times) for r, v in (limit or {}).items()}
    figures = {
        "chart-allocation": charts.allocation_figure(
            series.times,
            series.allocated,
            series.consumed,
            entitlement=entitlement,
            limit=limits,
            limit_name=limit_name,
        ),
        "chart-share": charts.share_figure(series.times, series.allocated, series.consumed, entitlement),
        "chart-counts": charts.admitted_pending_figure(series.times, series.admitted, series.pending),
    }
    waits = analytics.wait_history(admissions, window)
    per = duration(window.bucket.total_seconds())
    figures["chart-waits"] = charts.wait_figure(waits.times, waits.p50, waits.p95, per)
    figures["chart-evictions"] = charts.evictions_figure(waits.eviction_times, waits.evictions, per)
    return {"figures": charts.frame_page(figures, window, markers), "window": window}


def _changes(viewer: Access, object_type: str, object_id: int) -> list[ChangeRow]:
    rows = PolicyChange.objects.filter(object_type=object_type, object_id=str(object_id)).order_by("-at", "-id")
    return change_rows(viewer, list(rows[:RECENT_CHANGES]))


def _admitted_usage(**filters: Any) -> dict[str, int]:
    rows = (
        WorkloadResource.objects.filter(workload__state=WorkloadState.ADMITTED, **filters)
        .values_list("resource")
        .annotate(total=Sum("amount"))
    )
    return {resource: int(total) for resource, total in rows}


def local_queue_detail(
    viewer: Access, namespace: str, name: str, structure: ClusterStructure, range_name: str
) -> QueueDetail | None:
    lq = (
        LocalQueue.objects.select_related("namespace", "cluster_queue", "cluster_queue__cohort")
        .filter(namespace__name=namespace, name=name)
        .first()
    )
    if lq is None or not viewer.can_read_namespace(lq.namespace_id):
        return None
    queue = structure.cluster_queues[lq.cluster_queue_id]
    entitlement = structure.local_queue_entitlement(lq.id)
    allocated = _admitted_usage(workload__local_queue_id=lq.id)
    counts = live.counts_by_local_queue(local_queue_ids=[lq.id]).get(lq.id, live.Counts())
    keys = {"local_queue_ids": [lq.id], "namespace_ids": [lq.namespace_id], "cluster_queue_ids": [lq.cluster_queue_id]}
    return QueueDetail(
        obj=lq,
        kind="localQueue",
        mode=queue.effective_mode,
        scope=queue.scope,
        **_usage(allocated, lq.consumed_resources, entitlement, [counts]),
        holds=_flatten(live.holds(**keys)),
        budgets=_flatten(live.budgets(**keys)),
        changes=_changes(viewer, "localqueue", lq.id),
        **_figures(viewer, range_name, Kind.LOCAL_QUEUE, "localqueue", lq.id, entitlement, Q(local_queue_id=lq.id)),
        can_edit=viewer.can_edit_namespace(lq.namespace_id),
    )


def _usage(
    allocated: Mapping[str, float],
    consumed: Mapping[str, float] | None,
    entitlement: dict[str, Any],
    counts: Iterable[Any],
) -> dict[str, Any]:
    """What every queue page shows alike: admitted usage, decayed usage and the entitlement,
    the dominant shares of both, and the workloads admitted and pending (``live.Counts``)."""
    counts = list(counts)
    return {
        **usage_fields(allocated, consumed, entitlement),
        "entitlement": amounts(entitlement),
        "admitted": sum(c.admitted for c in counts),
        "pending": sum(c.pending for c in counts),
    }


def _shared_counts(group_of: Mapping[int, int], groups: Container[int]) -> list[live.Counts]:
    """The workload counts of the LocalQueues whose group (``group_of``: LocalQueue id -> ClusterQueue
    or namespace id, from the page's structure) is in ``groups``, read from the cluster-wide counts
    shared between viewers (``live.counts_by_local_queue``): the same figures the page's tree
    shows, with no query of its own while they are kept. Only the page's own queue's are returned."""
    return [counts for lq_id, counts in live.counts_by_local_queue().items() if group_of.get(lq_id) in groups]


def _flatten(found: Mapping[tuple[str, int], list[Any]]) -> list[Any]:
    """Holds or budgets of a queue and of the levels above it, the queue's own first."""
    order = {"localQueue": 0, "namespace": 1, "clusterQueue": 2}
    return [item for key in sorted(found, key=lambda k: order[k[0]]) for item in found[key]]


def cluster_queue_detail(
    viewer: Access,
    name: str,
    structure: ClusterStructure,
    range_name: str,
    admitted: live.AdmittedUsage | None = None,
) -> QueueDetail | None:
    """Admins, and tenants with a LocalQueue feeding it (its capacity explains their waiting)."""
    queue = ClusterQueue.objects.select_related("cohort").filter(name=name).first()
    if queue is None:
        return None
    if not viewer.is_admin and queue.id not in structure.cluster_queues_fed_by(viewer.roles):
        return None
    node = structure.cluster_queues[queue.id]
    used = (admitted or live.admitted_usage()).by_cluster_queue_flavor(structure.queue_of()).get(queue.id, {})
    quotas = [
        QuotaRow(
            c.flavor, c.resource, c.nominal, c.borrowing_limit, c.lending_limit, used.get((c.flavor, c.resource), 0)
        )
        for c in node.quotas
    ]
    known = {(c.flavor, c.resource) for c in node.quotas}
    quotas += [
        QuotaRow(flavor, resource, None, used=amount_)
        for (flavor, resource), amount_ in sorted(used.items())
        if (flavor, resource) not in known
    ]
    allocated = per_resource(used)
    capacity = node.capacity
    counts = _shared_counts(structure.queue_of(), {queue.id})
    keys = {"cluster_queue_ids": [queue.id]}
    return QueueDetail(
        obj=queue,
        kind="clusterQueue",
        mode=node.effective_mode,
        scope=node.scope,
        **_usage(allocated, queue.consumed_resources, capacity, counts),
        quotas=quotas,
        holds=_flatten(live.holds(**keys)),
        budgets=_flatten(live.budgets(**keys)),
        changes=_changes(viewer, "clusterqueue", queue.id) if viewer.is_admin else [],
        **_figures(
            viewer,
            range_name,
            Kind.CLUSTER_QUEUE,
            "clusterqueue",
            queue.id,
            {r: float(v) for r, v in capacity.items()},
            Q(cluster_queue_id=queue.id),
            show_changes=viewer.is_admin,
            limit_series=True,
        ),
        can_edit=viewer.is_admin,
    )


def namespace_detail(
    viewer: Access,
    name: str,
    structure: ClusterStructure,
    range_name: str,
    admitted: live.AdmittedUsage | None = None,
) -> QueueDetail | None:
    namespace = Namespace.objects.filter(name=name).first()
    if namespace is None or not viewer.can_read_namespace(namespace.id):
        return None
    entitlement = structure.namespace_entitlement(namespace.id)
    allocated = (admitted or live.admitted_usage()).by_group(structure.namespace_of()).get(namespace.id, {})
    hard = dict(NamespaceQuota.objects.filter(namespace=namespace).values_list("resource", "hard"))
    quotas = [
        QuotaRow("", resource, hard[resource], used=allocated.get(resource, 0)) for resource in resource_order(hard)
    ]
    counts = _shared_counts(structure.namespace_of(), {namespace.id})
    keys = {"namespace_ids": [namespace.id]}
    return QueueDetail(
        obj=namespace,
        kind="namespace",
        **_usage(allocated, namespace.consumed_resources, entitlement, counts),
        quotas=quotas,
        holds=_flatten(live.holds(**keys)),
        budgets=_flatten(live.budgets(**keys)),
        changes=_changes(viewer, "namespace", namespace.id),
        **_figures(
            viewer,
            range_name,
            Kind.NAMESPACE,
            "namespace",
            namespace.id,
            entitlement,
            Q(namespace_id=namespace.id),
            limit={r: float(v) for r, v in hard.items()},
            limit_name="Hard quota",
        ),
        can_edit=viewer.is_admin,
    )


def cohort_detail(
    viewer: Access,
    name: str,
    structure: ClusterStructure,
    range_name: str,
    admitted: live.AdmittedUsage | None = None,
) -> QueueDetail | None:
    """Admins only: a cohort spans many tenants."""
    if not viewer.is_admin:
        return None
    cohort = Cohort.objects.select_related("parent").filter(name=name).first()
    if cohort is None:
        return None
    capacity = structure.cohort_capacity(cohort.id)
    inside = structure.subtree_queue_ids(cohort.id)
    used = (admitted or live.admitted_usage()).by_cluster_queue_flavor(structure.queue_of())
    allocated: dict[str, float] = {}
    for cq_id in sorted(inside):
        per_resource(used.get(cq_id, {}), into=allocated)
    own = [
        QuotaRow(c.flavor, c.resource, c.nominal, c.borrowing_limit, c.lending_limit)
        for c in structure.cohorts[cohort.id].quotas
    ]
    counts = _shared_counts(structure.queue_of(), inside)
    mode, scope = "", ""
    for node in structure.cohort_path(cohort.id):
        if node.admission_mode:
            mode, scope = node.admission_mode, f"cohort {node.name}"
            break
    return QueueDetail(
        obj=cohort,
        kind="cohort",
        mode=mode,
        scope=scope,
        **_usage(allocated, cohort.consumed_resources, capacity, counts),
        quotas=own,
        changes=_changes(viewer, "cohort", cohort.id),
        **_figures(
            viewer,
            range_name,
            Kind.COHORT,
            "cohort",
            cohort.id,
            capacity,
            Q(cluster_queue_id__in=sorted(inside)),
            limit_series=True,
            limit_name="Subtree nominal quota",
        ),
        can_edit=True,
    )
