"""The queue tree page: cohort -> ClusterQueue -> namespace -> LocalQueue with shares."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render

from queues.models import ClusterQueue
from queues.selectors.tree import TreeFilters, queue_tree
from queues.selectors.workloads import filter_options
from queues.ui.views.common import (
    DashboardRequest,
    dashboard_view,
    live_interval,
    live_response,
    query_without,
    wants_live,
)


@dashboard_view
def tree(request: DashboardRequest) -> HttpResponse:
    filters = TreeFilters(
        q=request.GET.get("q", "").strip()[:100], cluster_queue=request.GET.get("cluster_queue", "").strip()[:63]
    )
    result = queue_tree(request.viewer, filters, request.GET.get("page", 1))
    context = {
        "tree": result,
        "filters": filters,
        "viewer": request.viewer,
        "query": query_without(request, "page", "live"),
    }
    if wants_live(request):
        return live_response(request, {"tree-table": ("queues/tree/_table.html", context)})
    names = (
        list(ClusterQueue.objects.order_by("name").values_list("name", flat=True))
        if request.viewer.is_admin
        else filter_options(request.viewer).cluster_queues
    )
    return render(
        request, "queues/tree/page.html", {**context, "live_interval": live_interval(), "cluster_queue_names": names}
    )
