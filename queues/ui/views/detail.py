"""Detail pages of a cohort, ClusterQueue, namespace and LocalQueue (404 when not visible)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import Http404, HttpResponse
from django.shortcuts import render

from core import tables
from queues.models import WorkloadState
from queues.selectors import history, live
from queues.selectors.detail import (
    QueueDetail,
    cluster_queue_detail,
    cohort_detail,
    local_queue_detail,
    namespace_detail,
)
from queues.selectors.structure import ClusterStructure, load_structure
from queues.selectors.tree import TreeFilters, queue_tree
from queues.selectors.workloads import workload_page
from queues.tables import WorkloadTable
from queues.ui.links import playground_url
from queues.ui.views.common import (
    DashboardRequest,
    dashboard_view,
    live_interval,
    live_response,
    query_without,
    wants_live,
)

# Short pages keep a queue's page within a few screens at 1440x900; the lists page on.
CHILD_PAGE_SIZE = 20
WORKLOAD_PAGE_SIZE = 10


def _render(
    request: DashboardRequest,
    template: str,
    detail_of: Callable[..., QueueDetail | None],
    key: tuple[str, ...],
    *,
    tree: TreeFilters | None,
    workloads: Callable[[ClusterStructure], dict[str, Any]],
) -> HttpResponse:
    """One queue's page: ``detail_of(viewer, *key, structure, range)`` finds it (None: 404)."""
    structure = load_structure()
    range_name = history.parse_range(request.GET.get("range"))
    # Pages with a tree fold the shared admitted usage twice (their figures, the tree): one copy.
    admitted = {"admitted": live.admitted_usage()} if tree else {}
    detail = detail_of(request.viewer, *key, structure, range_name, **admitted)
    if detail is None:
        raise Http404("No such queue")
    children = (
        queue_tree(request.viewer, tree, request.GET.get("tpage", 1), CHILD_PAGE_SIZE, structure, **admitted)
        if tree
        else None
    )
    params = request.GET.copy()
    if "state" not in params:  # a queue's page lists what waits and runs; history is in the workload list
        params.setlist("state", [WorkloadState.PENDING, WorkloadState.ADMITTED])
    if "sort" not in params:  # what waits first: the short page shows who waits and why
        params["sort"] = "-state"
    work = workload_page(request.viewer, params, structure, page_size=WORKLOAD_PAGE_SIZE, fixed=workloads(structure))
    context = {
        "detail": detail,
        "obj": detail.obj,
        "children": children,
        "work": work,
        "work_table": tables.configure(WorkloadTable(work.rows, order_by=work.sort, compact=True), request),
        "viewer": request.viewer,
        "range": range_name,
        "ranges": history.CHOICES,
        "window": detail.window,
        "query": query_without(request, "page", "live"),
        "tree_query": query_without(request, "tpage", "live"),
        "playground_url": playground_url(detail.obj),
    }
    if wants_live(request):
        fragments = {
            "detail-kpis": ("queues/detail/_kpis.html", context),
            "detail-workloads": ("queues/detail/_workloads.html", context),
        }
        if children is not None:
            fragments["detail-children"] = ("queues/detail/_children.html", context)
        return live_response(request, fragments, detail.figures)
    return render(
        request, template, {**context, "live_interval": live_interval(), "live_query": query_without(request, "live")}
    )


@dashboard_view
def local_queue(request: DashboardRequest, namespace: str, name: str) -> HttpResponse:
    fixed = {"local_queue__namespace__name": namespace, "local_queue__name": name}
    return _render(
        request,
        "queues/detail/local_queue.html",
        local_queue_detail,
        (namespace, name),
        tree=None,
        workloads=lambda _s: fixed,
    )


def _fed_by(cluster_queue_ids: Callable[[ClusterStructure], set[int]]) -> Callable[[ClusterStructure], dict[str, Any]]:
    """The workloads of the LocalQueues feeding the ClusterQueues ``cluster_queue_ids`` names, by
    LocalQueue id from the page's structure (the (state, local_queue) index, no join)."""

    def fixed(structure: ClusterStructure) -> dict[str, Any]:
        inside = cluster_queue_ids(structure)
        return {"local_queue_id__in": sorted(lq_id for lq_id, cq_id in structure.queue_of().items() if cq_id in inside)}

    return fixed


def _named_queue_view(
    template: str,
    detail_of: Callable[..., QueueDetail | None],
    level: str,
    workloads_of: Callable[[str], Callable[[ClusterStructure], dict[str, Any]]],
) -> Any:
    """The page of a ClusterQueue or a namespace: its children in the tree filtered by ``level``,
    its workloads by ``workloads_of(name)``."""

    @dashboard_view
    def view(request: DashboardRequest, name: str) -> HttpResponse:
        return _render(
            request, template, detail_of, (name,), tree=TreeFilters(**{level: name}), workloads=workloads_of(name)
        )

    return view


def _cluster_queue_workloads(name: str) -> Callable[[ClusterStructure], dict[str, Any]]:
    return _fed_by(lambda structure: {q.id for q in structure.cluster_queues.values() if q.name == name})


def _namespace_workloads(name: str) -> Callable[[ClusterStructure], dict[str, Any]]:
    return lambda _structure: {"namespace__name": name}


cluster_queue = _named_queue_view(
    "queues/detail/cluster_queue.html", cluster_queue_detail, "cluster_queue", _cluster_queue_workloads
)
namespace = _named_queue_view("queues/detail/namespace.html", namespace_detail, "namespace", _namespace_workloads)


@dashboard_view
def cohort(request: DashboardRequest, name: str) -> HttpResponse:
    def in_subtree(structure: ClusterStructure) -> set[int]:
        node = next((c for c in structure.cohorts.values() if c.name == name), None)
        return structure.subtree_queue_ids(node.id) if node else set()

    return _render(
        request,
        "queues/detail/cohort.html",
        cohort_detail,
        (name,),
        tree=TreeFilters(cohort=name),
        workloads=_fed_by(in_subtree),
    )
