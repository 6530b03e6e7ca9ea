"""Resource flavors: what capacity each kind of hardware holds, who has quota on it, what runs.

Cluster-wide policy is readable by every tenant (the API's rule); the per-ClusterQueue rows a
tenant sees are those its LocalQueues feed, the totals are the cluster's. Fixed queries: the
structure (5), flavors (1), admitted usage (1, shared), admitted workload counts per flavor (1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.paginator import Page, Paginator
from django.db.models import Count, QuerySet
from django.http import QueryDict

from core.access import Access
from core.tables import sort_alias
from queues.filtersets import ResourceFlavorFilterSet
from queues.models import Cluster, ResourceFlavor, WorkloadResource, WorkloadState
from queues.selectors import live
from queues.selectors.shares import NO_SHARE, Share
from queues.selectors.structure import ClusterStructure
from queues.ui.display import amount, resource_order, short_name


@dataclass
class FlavorCell:
    """One resource of one flavor, for the cluster or one ClusterQueue (millis)."""

    resource: str
    nominal: int = 0
    admitted: int = 0
    borrowed: int = 0
    cohort_owned: int = 0

    @property
    def label(self) -> str:
        return short_name(self.resource)

    @property
    def capacity(self) -> int:
        """All that can be admitted on the flavor: ClusterQueues' nominal quota plus the cohorts'
        own, the same figure the overview's capacity table shows."""
        return self.nominal + self.cohort_owned

    @property
    def share(self) -> Share:
        return Share(self.admitted / self.capacity, self.resource) if self.capacity else NO_SHARE

    def text(self, name: str) -> str:
        return amount(getattr(self, name), self.resource)

    @property
    def capacity_parts(self) -> str:
        """``24 GPU in ClusterQueues + 8 GPU in cohorts``; '' when cohorts own none of it."""
        if not self.cohort_owned:
            return ""
        return f"{self.text('nominal')} in ClusterQueues + {self.text('cohort_owned')} in cohorts"


@dataclass
class QueueOnFlavor:
    name: str
    cohort: str
    cells: list[FlavorCell]


@dataclass
class FlavorSummary:
    flavor: ResourceFlavor
    totals: list[FlavorCell] = field(default_factory=list)
    queues: list[QueueOnFlavor] = field(default_factory=list)
    running: int = 0

    @property
    def resources(self) -> str:
        return ", ".join(cell.label for cell in self.totals) or "no quota"


def flavor_summaries(
    viewer: Access,
    structure: ClusterStructure,
    name: str | None = None,
    *,
    queryset: QuerySet[ResourceFlavor] | None = None,
) -> list[FlavorSummary]:
    """Every flavor (or the one named, or those of ``queryset``) with its capacity, use and the
    ClusterQueues on it."""
    if queryset is None:
        queryset = ResourceFlavor.objects.order_by("name") if name is None else ResourceFlavor.objects.filter(name=name)
    flavors = list(queryset.select_related("cluster"))
    used = live.admitted_usage().by_cluster_queue_flavor(structure.queue_of())
    running = dict(
        WorkloadResource.objects.filter(workload__state=WorkloadState.ADMITTED)
        .values_list("flavor__name")
        .annotate(count=Count("workload", distinct=True))
    )
    visible = None if viewer.is_admin else structure.cluster_queues_fed_by(viewer.roles)
    result = []
    for flavor in flavors:
        totals: dict[str, FlavorCell] = {}
        rows: list[QueueOnFlavor] = []
        for queue in sorted(structure.cluster_queues.values(), key=lambda q: q.name):
            cells: dict[str, FlavorCell] = {}
            for cell in queue.quotas:
                if cell.flavor == flavor.name:
                    cells.setdefault(cell.resource, FlavorCell(cell.resource)).nominal += cell.nominal
            for (flavor_name, resource), admitted in used.get(queue.id, {}).items():
                if flavor_name == flavor.name:
                    target = cells.setdefault(resource, FlavorCell(resource))
                    target.admitted += admitted
            for row in cells.values():
                row.borrowed = max(0, row.admitted - row.nominal)
                total = totals.setdefault(row.resource, FlavorCell(row.resource))
                total.nominal += row.nominal
                total.admitted += row.admitted
                total.borrowed += row.borrowed
            if cells and (visible is None or queue.id in visible):
                cohort = structure.cohorts.get(queue.cohort_id) if queue.cohort_id else None
                rows.append(QueueOnFlavor(queue.name, cohort.name if cohort else "", _ordered(cells)))
        for cohort in structure.cohorts.values():
            for cell in cohort.quotas:
                if cell.flavor == flavor.name:
                    totals.setdefault(cell.resource, FlavorCell(cell.resource)).cohort_owned += cell.nominal
        result.append(FlavorSummary(flavor, _ordered(totals), rows, running.get(flavor.name, 0)))
    return result


def _ordered(cells: dict[str, FlavorCell]) -> list[FlavorCell]:
    return [cells[resource] for resource in resource_order(cells)]


PAGE_SIZE = 50
# ``?sort=`` of the flavor table: a flavor's figures are computed in Python from the structure, so
# the filtered list is sorted whole in Python, then paged (flavors are few: one per kind of hardware).
FLAVOR_SORTS = {"flavor": lambda s: (s.flavor.name,), "running": lambda s: (s.running, s.flavor.name)}
DEFAULT_FLAVOR_SORT = "flavor"


@dataclass
class FlavorList:
    page: Page
    filterset: ResourceFlavorFilterSet
    sort: str
    rows: list[FlavorSummary]  # the whole filtered, sorted list (exports); ``page`` holds this page's


def cluster_names() -> list[str]:
    """Every cluster's name (the list filters' choices; names are readable by every user)."""
    return list(Cluster.objects.order_by("name").values_list("name", flat=True))


def flavor_list(
    viewer: Access, structure: ClusterStructure, params: QueryDict, *, page_size: int = PAGE_SIZE
) -> FlavorList:
    """The flavors ``params`` filter (``?name=``, ``?cluster=``), sorted as ``?sort=`` asks, one page of them."""
    filterset = ResourceFlavorFilterSet(params, queryset=ResourceFlavor.objects.order_by("name"))
    queryset = filterset.qs if filterset.is_valid() else ResourceFlavor.objects.none()
    sort = sort_alias(params.get("sort"), FLAVOR_SORTS, DEFAULT_FLAVOR_SORT)
    rows = sorted(
        flavor_summaries(viewer, structure, queryset=queryset),
        key=FLAVOR_SORTS[sort.removeprefix("-")],
        reverse=sort.startswith("-"),
    )
    page = Paginator(rows, page_size).get_page(params.get("page", 1))
    return FlavorList(page=page, filterset=filterset, sort=sort, rows=rows)
