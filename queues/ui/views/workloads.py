"""The workload list (filterable, paginated, why-pending) and one workload's page."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import render

from queues.models import WorkloadState
from queues.models.choices import ACTIVE_STATES
from queues.selectors.structure import load_structure
from queues.selectors.workloads import SORTS, filter_options, workload_detail, workload_page
from queues.ui.views.common import (
    DashboardRequest,
    dashboard_view,
    live_interval,
    live_response,
    query_without,
    wants_live,
)

STATE_TABS = [("", "All"), *WorkloadState.choices]


@dashboard_view
def workload_list(request: DashboardRequest) -> HttpResponse:
    work = workload_page(request.viewer, request.GET, load_structure())
    context = {
        "work": work,
        "viewer": request.viewer,
        "query": query_without(request, "page", "live"),
        "sorts": list(SORTS),
    }
    if wants_live(request):
        return live_response(request, {"workload-table": ("queues/workloads/_table.html", context)})
    states = request.GET.getlist("state")
    return render(
        request,
        "queues/workloads/list.html",
        {
            **context,
            "live_interval": live_interval(),
            "live_query": query_without(request, "live"),
            "state_tabs": STATE_TABS,
            "options": filter_options(request.viewer),
            "current_state": states[0] if len(states) == 1 else ("" if not states else None),
        },
    )


@dashboard_view
def workload(request: DashboardRequest, namespace: str, name: str) -> HttpResponse:
    detail = workload_detail(request.viewer, namespace, name, load_structure())
    if detail is None:
        raise Http404("No such workload")
    can_cancel = detail.row.state in ACTIVE_STATES and request.viewer.can_edit_namespace(detail.workload.namespace_id)
    context = {"detail": detail, "row": detail.row, "viewer": request.viewer, "can_cancel": can_cancel}
    if wants_live(request):
        return live_response(request, {"workload-state": ("queues/workloads/_state.html", context)})
    return render(request, "queues/workloads/detail.html", {**context, "live_interval": live_interval()})
