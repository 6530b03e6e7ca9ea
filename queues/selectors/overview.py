"""The overview page: the cluster at a glance for admins, the tenant's own namespaces for tenants.

Admins get every cluster's capacity, admitted and pending work and health
(``queues.selectors.clusters``), capacity, admitted and borrowed usage per flavor and resource, workload counts, top
consumers, pending reasons, utilisation over time and fairness between tenants over time.
Tenants get the same shape limited to their namespaces: counts, hard quota use, their
LocalQueues' shares, their reasons, their allocation and counts over time. Fixed query count.

What is the same for every admin (the cluster-wide aggregates, and the admins' top consumers,
pending reasons and starved/reclaimable card folded from them) is shared between viewers for a
few seconds (``live.shared``, keys ending in ``admins`` or naming no viewer); a tenant's figures
are never read from or written to those keys.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Q, Value
from django.db.models.functions import Coalesce

from core.access import ADMIN, Access
from queues.models import (
    ClusterQueue,
    LocalQueue,
    Namespace,
    NamespaceQuota,
    QueueHold,
    StopPolicy,
    UsageSample,
    Workload,
    WorkloadState,
)
from queues.selectors import analytics, history, live
from queues.selectors.audit_log import change_markers
from queues.selectors.clusters import ClusterFigures, cluster_figures
from queues.selectors.reasons import title
from queues.selectors.shares import NO_SHARE, Share, add, dominant_share, jain_index
from queues.selectors.structure import ClusterStructure, load_structure
from queues.ui import charts
from queues.ui.display import amount, amounts, resource_order, short_name

TOP_CONSUMERS = 8
TOP_BUDGETS = 8
JAIN_POINTS = 36  # each point reads every active namespace's sample: keep the cold path cheap
Kind = UsageSample.Kind


@dataclass
class CapacityRow:
    flavor: str
    resource: str
    capacity: int
    admitted: int
    borrowed: int

    @property
    def share(self) -> Share:
        return Share(self.admitted / self.capacity, self.resource) if self.capacity else NO_SHARE

    @property
    def label(self) -> str:
        return short_name(self.resource)

    def text(self, name: str) -> str:
        return amount(getattr(self, name), self.resource)


@dataclass
class ConsumerRow:
    namespace: str
    name: str
    weight: Any
    allocated: list[str]
    decayed: list[str]
    share: Share
    usage_share: Share


@dataclass
class ReasonCount:
    code: str
    title: str
    count: int


@dataclass
class QuotaUse:
    namespace: str
    resource: str
    hard: int
    used: int

    @property
    def share(self) -> Share:
        return Share(self.used / self.hard, self.resource) if self.hard else NO_SHARE

    def text(self, name: str) -> str:
        return amount(getattr(self, name), self.resource)


@dataclass
class UtilisationNow:
    resource: str
    ratio: float | None

    @property
    def label(self) -> str:
        return short_name(self.resource)


@dataclass
class Overview:
    cluster_view: bool
    admitted: int = 0
    pending: int = 0
    utilisation: list[UtilisationNow] = field(default_factory=list)
    jain_now: float | None = None
    held_queues: int = 0
    stopped_queues: int = 0
    borrowing_queues: int = 0
    capacity_rows: list[CapacityRow] = field(default_factory=list)
    consumers: list[ConsumerRow] = field(default_factory=list)
    reasons: list[ReasonCount] = field(default_factory=list)
    quota_use: list[QuotaUse] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    budgets: list[Any] = field(default_factory=list)
    budget_count: int = 0
    starved: analytics.StarvedSummary = field(default_factory=analytics.StarvedSummary)
    figures: dict[str, charts.Figure] = field(default_factory=dict)
    window: history.Window | None = None  # the one window of every time chart on the page
    clusters: list[ClusterFigures] = field(default_factory=list)  # admins: every cluster's figures


# --- shared pieces ------------------------------------------------------------------------------


def _totals(counts: dict[int, live.Counts]) -> tuple[int, int]:
    return sum(c.admitted for c in counts.values()), sum(c.pending for c in counts.values())


def _reasons(viewer: Access) -> list[ReasonCount]:
    """Pending workloads per reason code, most first; the cluster-wide count (admins) is shared
    for a few seconds like the other cluster-wide aggregates (``live.shared``)."""
    if viewer.is_admin:
        counts = live.shared("dashboard:pending-reasons", lambda: _reason_counts(viewer))
    else:
        counts = _reason_counts(viewer)
    return [ReasonCount(code, title(code), count) for code, count in counts]


def _reason_counts(viewer: Access) -> list[tuple[str, int]]:
    rows = (
        viewer.visible_to(Workload.objects.filter(state=WorkloadState.PENDING))
        .values(code=Coalesce("reason__code", Value("")))  # stored apart; none yet: not evaluated
        .annotate(count=Count("id"))
        .order_by("-count", "code")
    )
    return [(row["code"], row["count"]) for row in rows]


def _consumers(
    viewer: Access,
    structure: ClusterStructure,
    usage: dict[int, dict[str, int]],
    capacity: dict[str, float],
    *,
    include_idle: bool = False,
) -> list[ConsumerRow]:
    """LocalQueues with the largest decayed usage as a share of the capacity (a tenant's idle
    queues too: a tenant has few and wants to see all of them)."""
    rows = viewer.visible_to(LocalQueue.objects.all()).values(
        "id", "name", "namespace__name", "weight", "consumed_resources"
    )
    # The ranking key of every row is the larger dominant share; the Share objects (and the
    # amounts) are built for the rows shown only. Same order of resources as dominant_share.
    entitled = sorted((resource, float(total)) for resource, total in capacity.items() if total > 0)

    def ratio(held: Mapping[str, float]) -> float:
        return max((float(held.get(resource, 0.0)) / total for resource, total in entitled), default=0.0)

    ranked = []
    for row in rows:
        consumed = row["consumed_resources"] or {}
        allocated = usage.get(row["id"], {})
        key = max(ratio(consumed), ratio(allocated))
        if key > 0 or include_idle:
            ranked.append((key, row, allocated, consumed))
    ranked.sort(key=lambda item: (-item[0], item[1]["namespace__name"], item[1]["name"]))
    return [
        ConsumerRow(
            row["namespace__name"],
            row["name"],
            row["weight"],
            amounts(allocated),
            amounts(consumed),
            dominant_share(allocated, capacity),
            dominant_share(consumed, capacity),
        )
        for _key, row, allocated, consumed in ranked[:TOP_CONSUMERS]
    ]


# --- admins: the whole cluster -----------------------------------------------------------------------


def cluster_overview(range_name: str) -> Overview:
    structure = load_structure()
    capacity = structure.cluster_capacity()
    admitted = live.admitted_usage()
    cq_usage = admitted.by_cluster_queue_flavor(structure.queue_of())
    lq_usage = admitted.by_local_queue()
    counts = live.counts_by_local_queue()
    overview = Overview(cluster_view=True)
    overview.admitted, overview.pending = _totals(counts)
    overview.capacity_rows = _capacity_rows(structure, cq_usage)
    overview.clusters = cluster_figures(ADMIN, structure)
    overview.borrowing_queues = sum(
        1
        for cq_id in cq_usage
        if any(row_borrowed for row_borrowed in _borrowed_of(structure, cq_id, cq_usage).values())
    )
    totals: dict[str, float] = {}
    for row in overview.capacity_rows:
        add(totals, {row.resource: row.admitted})
    overview.utilisation = [
        UtilisationNow(r, (totals.get(r, 0.0) / capacity[r]) if capacity.get(r) else None)
        for r in resource_order(capacity)
        if capacity.get(r)
    ]
    # The top consumers and the starved card are folds of the cluster-wide aggregates (and of
    # every LocalQueue's decayed usage), the same for every admin: shared like the aggregates.
    overview.consumers = live.shared(
        "dashboard:top-consumers:admins", lambda: _consumers(ADMIN, structure, lq_usage, capacity)
    )
    overview.reasons = _reasons(ADMIN)
    overview.held_queues = QueueHold.objects.count()
    overview.stopped_queues = (
        sum(1 for q in structure.cluster_queues.values() if q.stop_policy != StopPolicy.NONE)
        + LocalQueue.objects.exclude(stop_policy=StopPolicy.NONE).count()
    )
    overview.budgets, overview.budget_count = live.visible_budgets(ADMIN, limit=TOP_BUDGETS)
    overview.jain_now = _jain_now(structure, capacity, admitted, counts)
    overview.starved = live.shared(
        "dashboard:starved:admins",
        lambda: analytics.starved_and_reclaimable(ADMIN, structure, admitted, counts, _reclaim_policy()),
    )

    roots = [(Kind.COHORT, c.id) for c in structure.roots()] + [
        (Kind.CLUSTER_QUEUE, q.id) for q in structure.standalone_cluster_queues()
    ]
    overview.window = window = history.page_window(range_name, roots)
    start = window.start
    root_series = history.summed_series(roots, start)
    times, admitted_counts, pending = history.count_series(Kind.CLUSTER_QUEUE, start)
    jain_times, jain_values = _jain_history(structure, root_series, window)
    overview.figures = {
        "chart-utilisation": charts.utilisation_figure(root_series.times, root_series.allocated, root_series.capacity),
        "chart-fairness": charts.fairness_figure(jain_times, jain_values),
        "chart-counts": charts.admitted_pending_figure(times, admitted_counts, pending),
        "chart-capacity": charts.capacity_figure([row.__dict__ for row in overview.capacity_rows]),
    }
    overview.figures = charts.frame_page(overview.figures, window, change_markers(ADMIN, start))
    return overview


def _reclaim_policy() -> dict[int, str]:
    """``reclaimWithinCohort`` per ClusterQueue id (one query)."""
    return dict(ClusterQueue.objects.values_list("id", "reclaim_within_cohort"))


def _borrowed_of(
    structure: ClusterStructure, cq_id: int, cq_usage: dict[int, dict[tuple[str, str], int]]
) -> dict[tuple[str, str], int]:
    queue = structure.cluster_queues.get(cq_id)
    nominal = {(c.flavor, c.resource): c.nominal for c in queue.quotas} if queue else {}
    return {key: max(0, used - nominal.get(key, 0)) for key, used in cq_usage.get(cq_id, {}).items()}


def _capacity_rows(structure: ClusterStructure, cq_usage: dict[int, dict[tuple[str, str], int]]) -> list[CapacityRow]:
    capacity: dict[tuple[str, str], int] = defaultdict(int)
    for queue in structure.cluster_queues.values():
        for cell in queue.quotas:
            capacity[(cell.flavor, cell.resource)] += cell.nominal
    for cohort in structure.cohorts.values():
        for cell in cohort.quotas:
            capacity[(cell.flavor, cell.resource)] += cell.nominal
    admitted: dict[tuple[str, str], int] = defaultdict(int)
    borrowed: dict[tuple[str, str], int] = defaultdict(int)
    for cq_id, cells in cq_usage.items():
        for key, used in cells.items():
            admitted[key] += used
        for key, over in _borrowed_of(structure, cq_id, cq_usage).items():
            borrowed[key] += over
    keys = set(capacity) | set(admitted)
    order = {r: i for i, r in enumerate(resource_order(k[1] for k in keys))}
    ordered = sorted(keys, key=lambda k: (k[0], order[k[1]]))
    return [
        CapacityRow(
            flavor or "(none)",
            resource,
            capacity.get((flavor, resource), 0),
            admitted.get((flavor, resource), 0),
            borrowed.get((flavor, resource), 0),
        )
        for flavor, resource in ordered
    ]


def _namespace_value(allocated: Mapping[str, float], capacity: dict[str, float], weight: float) -> float:
    """Jain's x for one tenant: dominant share of the cluster's capacity per unit of weight."""
    ratio = dominant_share(allocated, capacity).ratio or 0.0
    return ratio / weight if weight > 0 else 0.0


def _namespace_weights() -> dict[int, float]:
    return {ns_id: float(weight) for ns_id, weight in Namespace.objects.values_list("id", "weight")}


def _jain_now(
    structure: ClusterStructure,
    capacity: dict[str, float],
    admitted: live.AdmittedUsage,
    counts: dict[int, live.Counts],
) -> float | None:
    """Fairness between tenants now, over namespaces with admitted or pending work."""
    namespace_of = structure.namespace_of()
    active = {namespace_of[lq_id] for lq_id, c in counts.items() if (c.admitted or c.pending) and lq_id in namespace_of}
    if not active:
        return None
    allocated = admitted.by_group(namespace_of)
    weights = {lq.namespace_id: lq.namespace_weight for lq in structure.local_queues.values()}
    return jain_index(_namespace_value(allocated.get(ns, {}), capacity, weights.get(ns, 1.0)) for ns in sorted(active))


def _jain_history(
    structure: ClusterStructure, roots: history.Series, window: history.Window
) -> tuple[list[datetime], list[float | None]]:
    """Fairness between tenants at up to ``JAIN_POINTS`` sample times, cached per new sample."""
    key = f"dashboard:jain:{window.name}:{window.data_start}:{history.latest_sample_id()}"
    cached = cache.get(key)
    if cached is not None:
        return cached
    kept = history.thin(roots.times, JAIN_POINTS)
    times = [t for t in roots.times if t in kept]
    index = {t: i for i, t in enumerate(roots.times)}
    rows = history.namespace_rows_at(times)
    weights = _namespace_weights()
    per_time: dict[datetime, list[float]] = defaultdict(list)
    # _namespace_value per row, with each time's capacity (the resources above 0, in the order
    # dominant_share takes them) made once per time instead of once per namespace and time.
    entitled_at: dict[int, list[tuple[str, float]]] = {}
    for at, ns_id, allocated, admitted, pending in rows:
        if not (admitted or pending):
            continue
        i = index[at]
        entitled = entitled_at.get(i)
        if entitled is None:
            capacity = sorted((r, values[i]) for r, values in roots.capacity.items())
            entitled = entitled_at[i] = [(r, total) for r, total in capacity if total > 0]
        held = allocated or {}
        ratio = max((float(held.get(r, 0.0)) / total for r, total in entitled), default=0.0)
        weight = weights.get(ns_id, 1.0)
        per_time[at].append(ratio / weight if weight > 0 else 0.0)
    values = [jain_index(per_time[t]) if per_time.get(t) else None for t in times]
    result = (times, values)
    cache.set(key, result, timeout=3600)
    return result


# --- tenants: their own namespaces ---------------------------------------------------------------------


def tenant_overview(viewer: Access, range_name: str) -> Overview:
    structure = load_structure()
    ns_ids = viewer.namespace_ids
    overview = Overview(cluster_view=False)
    overview.namespaces = list(Namespace.objects.filter(id__in=ns_ids).order_by("name").values_list("name", flat=True))
    admitted = live.admitted_usage(namespace_ids=ns_ids)
    counts = live.counts_by_local_queue(namespace_ids=ns_ids)
    overview.admitted, overview.pending = _totals(counts)
    lq_usage = admitted.by_local_queue()
    my_queues = structure.cluster_queues_fed_by(viewer.roles)
    capacity = structure.cluster_capacity(my_queues)
    overview.consumers = _consumers(viewer, structure, lq_usage, capacity, include_idle=True)
    overview.reasons = _reasons(viewer)
    overview.budgets, overview.budget_count = live.visible_budgets(viewer, limit=TOP_BUDGETS)
    overview.quota_use = _quota_use(ns_ids, admitted.by_group(structure.namespace_of()))
    overview.starved = analytics.starved_and_reclaimable(
        viewer, structure, live.admitted_usage(), counts, _reclaim_policy()
    )
    overview.held_queues = QueueHold.objects.filter(
        Q(namespace_id__in=ns_ids) | Q(local_queue__namespace_id__in=ns_ids) | Q(cluster_queue_id__in=my_queues)
    ).count()
    overview.stopped_queues = LocalQueue.objects.filter(namespace_id__in=ns_ids).exclude(
        stop_policy=StopPolicy.NONE
    ).count() + (ClusterQueue.objects.filter(id__in=my_queues).exclude(stop_policy=StopPolicy.NONE).count())

    targets = [(Kind.NAMESPACE, ns_id) for ns_id in ns_ids]
    overview.window = window = history.page_window(range_name, targets)
    start = window.start
    series = history.summed_series(targets, start)
    times, admitted_counts, pending = history.count_series(Kind.NAMESPACE, start, ns_ids)
    entitlement: dict[str, float] = {}
    for ns_id in ns_ids:
        add(entitlement, structure.namespace_entitlement(ns_id))
    hard: dict[str, float] = {}
    for use in overview.quota_use:
        add(hard, {use.resource: use.hard})
    overview.figures = {
        "chart-allocation": charts.allocation_figure(
            series.times,
            series.allocated,
            series.consumed,
            entitlement=entitlement,
            limit={r: [v] * len(series.times) for r, v in hard.items()},
            limit_name="Namespace hard quota",
        ),
        "chart-counts": charts.admitted_pending_figure(times, admitted_counts, pending),
    }
    overview.figures = charts.frame_page(overview.figures, window, change_markers(viewer, start))
    return overview


def _quota_use(ns_ids: list[int], usage: dict[int, dict[str, int]]) -> list[QuotaUse]:
    used = {(ns_id, resource): amount for ns_id, per in usage.items() for resource, amount in per.items()}
    rows = NamespaceQuota.objects.filter(namespace_id__in=ns_ids).values_list(
        "namespace_id", "namespace__name", "resource", "hard"
    )
    result = [QuotaUse(name, resource, hard, used.get((ns_id, resource), 0)) for ns_id, name, resource, hard in rows]
    order = {r: i for i, r in enumerate(resource_order(q.resource for q in result))}
    return sorted(result, key=lambda q: (q.namespace, order[q.resource]))


def overview_for(viewer: Access, range_name: str) -> Overview:
    return cluster_overview(range_name) if viewer.is_admin else tenant_overview(viewer, range_name)
