"""Current state, aggregated in SQL: admitted usage, workload counts, holds and budgets.

Each function is one query whatever the number of workloads; callers pass the ids of the rows
they are about to show so that a page never aggregates what it does not display.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Q, Sum

from core import extensions
from core.access import Access
from core.extensions import ExtensionPoint
from queues.models import QueueHold, Workload, WorkloadResource, WorkloadState

Usage = dict[str, int]
T = TypeVar("T")

# Cluster-wide aggregates (admins' overview and tree) are shared for a few seconds: every open
# dashboard polls, the admission pass changes them at most every few seconds anyway, and at
# 100,000 workloads one aggregate costs tens of milliseconds. 0 turns the cache off.
AGGREGATE_CACHE_SECONDS = 5


def shared(key: str, compute: Callable[[], T]) -> T:
    """``compute()``, kept ``DASHBOARD_AGGREGATE_CACHE_SECONDS`` under ``key`` for every viewer:
    only for cluster-wide figures that are the same whoever looks (never narrowed to a tenant)."""
    ttl = int(getattr(settings, "DASHBOARD_AGGREGATE_CACHE_SECONDS", AGGREGATE_CACHE_SECONDS))
    if ttl <= 0:
        return compute()
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, ttl)
    return value


class AdmittedUsage:
    """Admitted requests per LocalQueue, flavor and resource, from one grouped query; the other
    levels are folded from it in Python (a LocalQueue's ClusterQueue cannot change while it
    holds workloads, so its admitted work sits in that ClusterQueue).

    The same query also groups by the cluster each workload was admitted on
    (``Workload.cluster``), kept in ``clusters`` (cluster id or None for "not recorded" ->
    resource -> millis): the clusters table reads it instead of joining the rows a second time.
    """

    def __init__(
        self, cells: dict[int, dict[tuple[str, str], int]], clusters: dict[int | None, Usage] | None = None
    ) -> None:
        self.cells = cells
        self.clusters = clusters or {}
        self._by_local_queue: dict[int, Usage] | None = None
        self._folds: dict[str, tuple[Mapping[int, int], Any]] = {}

    def by_local_queue(self) -> dict[int, Usage]:
        """Folded once per instance (pages ask several times): callers must not change it."""
        if self._by_local_queue is None:
            usage: dict[int, Usage] = {}
            for lq_id, cells in self.cells.items():
                totals: Usage = {}
                for (_flavor, resource), amount in cells.items():
                    totals[resource] = totals.get(resource, 0) + amount
                usage[lq_id] = totals
            self._by_local_queue = usage
        return self._by_local_queue

    def by_cluster_queue_flavor(self, queue_of: Mapping[int, int]) -> dict[int, dict[tuple[str, str], int]]:
        """``queue_of`` maps LocalQueue id -> ClusterQueue id (``ClusterStructure.queue_of``).
        Folded once per mapping object (pages ask several times with the structure's one)."""
        return self._memo("cq", queue_of, lambda: self._by_cluster_queue_flavor(queue_of))

    def _by_cluster_queue_flavor(self, queue_of: Mapping[int, int]) -> dict[int, dict[tuple[str, str], int]]:
        usage: dict[int, dict[tuple[str, str], int]] = defaultdict(dict)
        for lq_id, cells in self.cells.items():
            cq_id = queue_of.get(lq_id)
            if cq_id is None:
                continue
            for key, amount in cells.items():
                usage[cq_id][key] = usage[cq_id].get(key, 0) + amount
        return dict(usage)

    def by_group(self, group_of: Mapping[int, int]) -> dict[int, Usage]:
        """Summed per group (e.g. LocalQueue id -> namespace id), once per mapping object."""
        return self._memo("group", group_of, lambda: self._by_group(group_of))

    def _by_group(self, group_of: Mapping[int, int]) -> dict[int, Usage]:
        usage: dict[int, Usage] = defaultdict(dict)
        for lq_id, totals in self.by_local_queue().items():
            group = group_of.get(lq_id)
            if group is None:
                continue
            for resource, amount in totals.items():
                usage[group][resource] = usage[group].get(resource, 0) + amount
        return dict(usage)

    def _memo(self, kind: str, mapping: Mapping[int, int], fold: Callable[[], T]) -> T:
        """``fold()`` kept for this very ``mapping`` object (compared by identity; the results
        are shared between callers, who must not change them)."""
        found = self._folds.get(kind)
        if found is not None and found[0] is mapping:
            return found[1]
        value = fold()
        self._folds[kind] = (mapping, value)
        return value

    def total(self) -> Usage:
        totals: Usage = {}
        for usage in self.by_local_queue().values():
            for resource, amount in usage.items():
                totals[resource] = totals.get(resource, 0) + amount
        return totals


def admitted_usage(
    *,
    namespace_ids: Iterable[int] | None = None,
    local_queue_ids: Iterable[int] | None = None,
    cluster_queue_ids: Iterable[int] | None = None,
) -> AdmittedUsage:
    """One aggregate over the admitted workloads (all, shared for a few seconds; or narrowed)."""
    if namespace_ids is None and local_queue_ids is None and cluster_queue_ids is None:
        return shared("dashboard:admitted-usage:clusters", _admitted_usage)
    return _admitted_usage(namespace_ids, local_queue_ids, cluster_queue_ids)


def _admitted_usage(
    namespace_ids: Iterable[int] | None = None,
    local_queue_ids: Iterable[int] | None = None,
    cluster_queue_ids: Iterable[int] | None = None,
) -> AdmittedUsage:
    rows = WorkloadResource.objects.filter(workload__state=WorkloadState.ADMITTED)
    if namespace_ids is not None:
        rows = rows.filter(workload__namespace_id__in=list(namespace_ids))
    if local_queue_ids is not None:
        rows = rows.filter(workload__local_queue_id__in=list(local_queue_ids))
    if cluster_queue_ids is not None:
        rows = rows.filter(workload__local_queue__cluster_queue_id__in=list(cluster_queue_ids))
    cells: dict[int, dict[tuple[str, str], int]] = defaultdict(dict)
    clusters: dict[int | None, Usage] = defaultdict(dict)
    for lq_id, cluster_id, flavor, resource, total in rows.values_list(
        "workload__local_queue_id", "workload__cluster_id", "flavor__name", "resource"
    ).annotate(total=Sum("amount")):
        key = (flavor or "", resource)
        cells[lq_id][key] = cells[lq_id].get(key, 0) + int(total)
        clusters[cluster_id][resource] = clusters[cluster_id].get(resource, 0) + int(total)
    return AdmittedUsage(dict(cells), dict(clusters))


class Counts(NamedTuple):
    """Admitted and pending workloads of one queue. A named tuple, not a dataclass: the shared
    cluster-wide counts hold one per LocalQueue, and every page that reads them unpickles them
    from the cache (a thousand tuples load four times faster than a thousand dataclasses)."""

    admitted: int = 0
    pending: int = 0


def counts_by_local_queue(
    *,
    namespace_ids: Iterable[int] | None = None,
    local_queue_ids: Iterable[int] | None = None,
    cluster_queue_ids: Iterable[int] | None = None,
) -> dict[int, Counts]:
    """Admitted and pending workloads per LocalQueue (one grouped count), optionally narrowed.

    Counting ``local_queue`` rather than ``id``: every column the query reads is then in the
    (state, local_queue) index, and PostgreSQL answers from the index alone, five times faster
    at 100,000 workloads.
    """
    if namespace_ids is None and local_queue_ids is None and cluster_queue_ids is None:
        return shared("dashboard:counts", _counts)
    return _counts(namespace_ids, local_queue_ids, cluster_queue_ids)


def _counts(
    namespace_ids: Iterable[int] | None = None,
    local_queue_ids: Iterable[int] | None = None,
    cluster_queue_ids: Iterable[int] | None = None,
) -> dict[int, Counts]:
    rows = Workload.objects.filter(state__in=(WorkloadState.ADMITTED, WorkloadState.PENDING))
    if namespace_ids is not None:
        rows = rows.filter(namespace_id__in=list(namespace_ids))
    if local_queue_ids is not None:
        rows = rows.filter(local_queue_id__in=list(local_queue_ids))
    if cluster_queue_ids is not None:
        rows = rows.filter(local_queue__cluster_queue_id__in=list(cluster_queue_ids))
    grouped = rows.values("local_queue_id").annotate(
        admitted=Count("local_queue", filter=Q(state=WorkloadState.ADMITTED)),
        pending=Count("local_queue", filter=Q(state=WorkloadState.PENDING)),
    )
    return {row["local_queue_id"]: Counts(row["admitted"], row["pending"]) for row in grouped}


def admitted_workloads_by_cluster(*, namespace_ids: Iterable[int] | None = None) -> dict[int | None, int]:
    """Admitted workloads per cluster they were admitted on (None: not recorded), one grouped
    count; cluster-wide (shared for a few seconds) or narrowed to ``namespace_ids``."""
    if namespace_ids is None:
        return shared("dashboard:admitted-by-cluster", _admitted_workloads_by_cluster)
    return _admitted_workloads_by_cluster(namespace_ids)


def _admitted_workloads_by_cluster(namespace_ids: Iterable[int] | None = None) -> dict[int | None, int]:
    rows = Workload.objects.filter(state=WorkloadState.ADMITTED)
    if namespace_ids is not None:
        rows = rows.filter(namespace_id__in=list(namespace_ids))
    return dict(rows.order_by().values_list("cluster_id").annotate(count=Count("id")))


@dataclass(frozen=True)
class HoldView:
    code: str
    message: str
    drain: bool
    source: str


def holds(
    *, local_queue_ids: Iterable[int] = (), namespace_ids: Iterable[int] = (), cluster_queue_ids: Iterable[int] = ()
) -> dict[tuple[str, int], list[HoldView]]:
    """QueueHolds (budget or operator holds) keyed by ``("localQueue"|"namespace"|"clusterQueue", id)``."""
    found: dict[tuple[str, int], list[HoldView]] = defaultdict(list)
    query = (
        Q(local_queue_id__in=list(local_queue_ids))
        | Q(namespace_id__in=list(namespace_ids))
        | Q(cluster_queue_id__in=list(cluster_queue_ids))
    )
    for row in (
        QueueHold.objects.filter(query)
        .order_by("id")
        .values("local_queue_id", "namespace_id", "cluster_queue_id", "code", "message", "drain", "source")
    ):
        view = HoldView(row["code"], row["message"], row["drain"], row["source"])
        if row["local_queue_id"]:
            found[("localQueue", row["local_queue_id"])].append(view)
        elif row["namespace_id"]:
            found[("namespace", row["namespace_id"])].append(view)
        else:
            found[("clusterQueue", row["cluster_queue_id"])].append(view)
    return found


# Budgets attached to queues come from the budgets app, which registers its chips at
# ``QUEUE_PAGE_CHIPS`` in its ``AppConfig.ready`` (``core.extensions``): queues never imports
# budgets. Without them, none.
class AttachedBudgets(Protocol):
    def __call__(
        self, *, local_queue_ids: Iterable[int], namespace_ids: Iterable[int], cluster_queue_ids: Iterable[int]
    ) -> Mapping[tuple[str, int], list[Any]]: ...


class VisibleBudgets(Protocol):
    def __call__(self, viewer: Access, *, limit: int) -> tuple[list[Any], int]: ...


@dataclass(frozen=True)
class QueuePageChips:
    """Where the pages get budget chips (objects with ``name``, ``level``, ``status``...): those
    attached to the given queues, keyed like ``holds``; and those a viewer may see, fullest first."""

    attached: AttachedBudgets
    visible: VisibleBudgets


QUEUE_PAGE_CHIPS: ExtensionPoint[QueuePageChips] = ExtensionPoint("queue page chips")


def budgets(
    *, local_queue_ids: Iterable[int] = (), namespace_ids: Iterable[int] = (), cluster_queue_ids: Iterable[int] = ()
) -> Mapping[tuple[str, int], list[Any]]:
    """Budgets attached to the given queues with their status, keyed like ``holds``."""
    providers = extensions.items(QUEUE_PAGE_CHIPS)
    if not providers:
        return {}
    if len(providers) == 1:
        chips = providers[0][1]
        return chips.attached(
            local_queue_ids=local_queue_ids, namespace_ids=namespace_ids, cluster_queue_ids=cluster_queue_ids
        )
    found: dict[tuple[str, int], list[Any]] = defaultdict(list)
    for _, chips in providers:
        attached = chips.attached(
            local_queue_ids=local_queue_ids, namespace_ids=namespace_ids, cluster_queue_ids=cluster_queue_ids
        )
        for key, rows in attached.items():
            found[key].extend(rows)
    return dict(found)


def visible_budgets(viewer: Access, *, limit: int) -> tuple[list[Any], int]:
    """The budgets a viewer may see, fullest first: ``limit`` of them and the total (with several
    providers, each one's in registration order)."""
    shown: list[Any] = []
    total = 0
    for _, chips in extensions.items(QUEUE_PAGE_CHIPS):
        rows, count = chips.visible(viewer, limit=limit)
        shown.extend(rows)
        total += count
    return shown[:limit], total
