"""Per-cluster figures: capacity, admitted work, pending work and health of every cluster, for
the overview's clusters table, the cluster pages and ``/api/v1/clusters/`` (one place).

Definitions (millis per resource, as everywhere):

- **capacity**: the quota on the cluster's flavors, counted as the overview counts it:
  ClusterQueues' nominal quota plus the cohorts' own quota on those flavors.
- **admitted**: the requests of the workloads admitted on the cluster (``Workload.cluster``;
  admitted without one recorded: the default cluster), and how many workloads that is.
- **pending** is not placed yet, so it is counted twice: ``pending_only_here`` are pending
  workloads that can run nowhere else (a job already on the cluster's scheduler, imported from
  it or placed there before and waiting again; or a workload whose ClusterQueue holds flavors
  of this cluster only), ``pending_could_run`` those that could be placed there (the first kind
  plus every unbound pending workload whose ClusterQueue holds a flavor of this cluster). A
  workload waiting in a ClusterQueue over two clusters is in both clusters' ``could run``.
- **health**: reachable, unreachable (backing off until ``retry_at``) or disabled, the last
  successful sync and, for admins only, the last error.

Tenants: every cluster's name, backend and health (the API's rule), but figures only of what
concerns their own namespaces: the capacity of the ClusterQueues their LocalQueues feed, and
their own namespaces' admitted and pending workloads. Nothing names another tenant's object.

Queries: 11 whatever the number of clusters, flavors and workloads (clusters with health 1,
flavors 1, the structure 5 unless passed in, admitted usage 1, admitted workloads per cluster
1, pending per LocalQueue 1, bound pending per cluster 1); ``name`` narrows the clusters, not
the work. For admins the admitted usage, the admitted workloads per cluster and the pending
counts are the cluster-wide aggregates ``queues.selectors.live`` shares for a few seconds (the
admitted usage is the one the overview's other tables read), so a warm read makes 8 and fewer.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count
from django.utils import timezone

from core.access import Access
from queues.models import (
    BackendHealth,
    Cluster,
    ClusterJob,
    ResourceFlavor,
    WorkloadState,
    health_of,
)
from queues.selectors import live
from queues.selectors.shares import NO_SHARE, Share, dominant_share
from queues.selectors.structure import ClusterStructure, load_structure
from queues.ui.display import amount, resource_order, short_name

REACHABLE = "reachable"
UNREACHABLE = "unreachable"
DISABLED = "disabled"


@dataclass(frozen=True)
class ClusterHealth:
    """One cluster's health as a viewer may see it (``last_error`` is empty for tenants)."""

    state: str
    reachable: bool
    backing_off: bool = False
    failures: int = 0
    unreachable_since: datetime | None = None
    retry_at: datetime | None = None
    last_sync: datetime | None = None
    last_error: str = ""


@dataclass(frozen=True)
class ClusterCell:
    """One resource of one cluster (millis)."""

    resource: str
    capacity: int = 0
    admitted: int = 0

    @property
    def label(self) -> str:
        return short_name(self.resource)

    @property
    def share(self) -> Share:
        return Share(self.admitted / self.capacity, self.resource) if self.capacity else NO_SHARE

    def text(self, name: str) -> str:
        return amount(getattr(self, name), self.resource)


@dataclass
class ClusterFigures:
    id: int
    name: str
    description: str
    backend: str
    enabled: bool
    from_settings: bool
    health: ClusterHealth
    flavors: list[str] = field(default_factory=list)
    cells: list[ClusterCell] = field(default_factory=list)
    admitted_workloads: int = 0
    pending_only_here: int = 0
    pending_could_run: int = 0

    @property
    def capacity(self) -> dict[str, int]:
        """Per resource the cluster has quota or admitted work in (zeros kept: the page's rows)."""
        return {cell.resource: cell.capacity for cell in self.cells}

    @property
    def admitted(self) -> dict[str, int]:
        return {cell.resource: cell.admitted for cell in self.cells}

    @property
    def capacity_display(self) -> list[str]:
        """As the page writes them, e.g. ``["40 GPU", "672 CPU"]`` (zeros too: a row per resource)."""
        return [cell.text("capacity") for cell in self.cells]

    @property
    def admitted_display(self) -> list[str]:
        return [cell.text("admitted") for cell in self.cells]

    @property
    def utilisation(self) -> Share:
        """The dominant share of the capacity admitted now (None: no capacity)."""
        return dominant_share(self.admitted, {r: float(v) for r, v in self.capacity.items()})


def _health(cluster: Cluster, row: BackendHealth | None, *, with_error: bool, now: datetime) -> ClusterHealth:
    reachable = row is None or row.reachable
    state = DISABLED if not cluster.enabled else (REACHABLE if reachable else UNREACHABLE)
    if row is None:
        return ClusterHealth(state=state, reachable=True)
    return ClusterHealth(
        state=state,
        reachable=row.reachable,
        backing_off=not row.reachable and row.retry_at is not None and row.retry_at > now,
        failures=row.failures,
        unreachable_since=row.unreachable_since,
        retry_at=row.retry_at,
        last_sync=row.last_ok_at,
        last_error=row.last_error if with_error else "",
    )


def cluster_figures(
    viewer: Access, structure: ClusterStructure | None = None, *, name: str | None = None
) -> list[ClusterFigures]:
    """Every cluster (or the one named) with its figures as ``viewer`` may see them, in name order."""
    clusters = Cluster.objects.select_related("health").order_by("name")
    if name is not None:
        clusters = clusters.filter(name=name)
    found = list(clusters)
    if not found:
        return []
    structure = structure if structure is not None else load_structure()
    namespace_ids = None if viewer.is_admin else viewer.namespace_ids
    visible_queues = None if namespace_ids is None else structure.cluster_queues_fed_by(set(namespace_ids))
    default_id = next((c.pk for c in found if c.from_settings), None)

    cluster_of_flavor: dict[str, int] = {}
    flavors_of: dict[int, list[str]] = defaultdict(list)
    for flavor_name, cluster_id in ResourceFlavor.objects.order_by("name").values_list("name", "cluster_id"):
        cluster_of_flavor[flavor_name] = cluster_id
        flavors_of[cluster_id].append(flavor_name)

    capacity = _capacity(structure, cluster_of_flavor, visible_queues)
    admitted, admitted_counts = _admitted(namespace_ids, default_id)
    only_here, could_run = _pending(structure, cluster_of_flavor, namespace_ids)

    now = timezone.now()
    result = []
    for cluster in found:
        resources = set(capacity.get(cluster.pk, {})) | set(admitted.get(cluster.pk, {}))
        cells = [
            ClusterCell(r, capacity.get(cluster.pk, {}).get(r, 0), admitted.get(cluster.pk, {}).get(r, 0))
            for r in resource_order(resources)
        ]
        result.append(
            ClusterFigures(
                id=cluster.pk,
                name=cluster.name,
                description=cluster.description,
                backend=cluster.effective_backend,
                enabled=cluster.enabled,
                from_settings=cluster.from_settings,
                health=_health(cluster, health_of(cluster), with_error=viewer.is_admin, now=now),
                flavors=flavors_of.get(cluster.pk, []),
                cells=cells,
                admitted_workloads=admitted_counts.get(cluster.pk, 0),
                pending_only_here=only_here.get(cluster.pk, 0),
                pending_could_run=could_run.get(cluster.pk, 0),
            )
        )
    return result


def _capacity(
    structure: ClusterStructure, cluster_of_flavor: dict[str, int], visible_queues: set[int] | None
) -> dict[int, dict[str, int]]:
    """Quota on each cluster's flavors: the ClusterQueues' nominal and (admins) the cohorts' own."""
    total: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for queue in structure.cluster_queues.values():
        if visible_queues is not None and queue.id not in visible_queues:
            continue
        for cell in queue.quotas:
            if cell.flavor in cluster_of_flavor:
                total[cluster_of_flavor[cell.flavor]][cell.resource] += cell.nominal
    if visible_queues is None:
        for cohort in structure.cohorts.values():
            for cell in cohort.quotas:
                if cell.flavor in cluster_of_flavor:
                    total[cluster_of_flavor[cell.flavor]][cell.resource] += cell.nominal
    return total


def _admitted(
    namespace_ids: list[int] | None, default_id: int | None
) -> tuple[dict[int, dict[str, int]], dict[int, int]]:
    """Admitted requests and admitted workloads per cluster: the admitted-usage aggregate the
    other tables read (grouped by cluster too) and one grouped count; both shared between
    admins for a few seconds (``live.AGGREGATE_CACHE_SECONDS``), narrowed for tenants."""
    per_cluster = live.admitted_usage(namespace_ids=namespace_ids).clusters
    per_cluster_counts = live.admitted_workloads_by_cluster(namespace_ids=namespace_ids)
    usage: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for cluster_id, totals in per_cluster.items():
        key = cluster_id if cluster_id is not None else default_id
        if key is not None:
            for resource, total in totals.items():
                usage[key][resource] += total
    counts: dict[int, int] = defaultdict(int)
    for cluster_id, count in per_cluster_counts.items():
        key = cluster_id if cluster_id is not None else default_id
        if key is not None:
            counts[key] += count
    return usage, counts


def _pending(
    structure: ClusterStructure, cluster_of_flavor: dict[str, int], namespace_ids: list[int] | None
) -> tuple[dict[int, int], dict[int, int]]:
    """Pending workloads that can run only on each cluster, and those that could run there."""
    counts = (
        live.counts_by_local_queue()
        if namespace_ids is None
        else live.counts_by_local_queue(namespace_ids=namespace_ids)
    )
    bound = ClusterJob.objects.filter(workload__state=WorkloadState.PENDING)
    if namespace_ids is not None:
        bound = bound.filter(workload__namespace_id__in=namespace_ids)
    bound_per_queue: dict[int, int] = defaultdict(int)
    only_here: dict[int, int] = defaultdict(int)
    for cluster_id, lq_id, count in (
        bound.order_by().values_list("cluster_id", "workload__local_queue_id").annotate(count=Count("id"))
    ):
        only_here[cluster_id] += count
        bound_per_queue[lq_id] += count
    could_run: dict[int, int] = defaultdict(int, only_here)
    clusters_of_queue = {
        queue.id: {cluster_of_flavor[c.flavor] for c in queue.quotas if c.flavor in cluster_of_flavor}
        for queue in structure.cluster_queues.values()
    }
    queue_of = structure.queue_of()
    for lq_id, count in counts.items():
        unbound = count.pending - bound_per_queue.get(lq_id, 0)
        if unbound <= 0 or lq_id not in queue_of:
            continue
        targets = clusters_of_queue.get(queue_of[lq_id], set())
        for cluster_id in targets:
            could_run[cluster_id] += unbound
        if len(targets) == 1:
            only_here[next(iter(targets))] += unbound
    return dict(only_here), dict(could_run)
