"""The workload list (filterable, paginated, why-pending) and one workload's page."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import render

from core import tables
from queues.models import WorkloadState
from queues.models.choices import ACTIVE_STATES
from queues.selectors.structure import load_structure
from queues.selectors.workloads import filter_options, workload_detail, workload_export, workload_page
from queues.tables import WorkloadTable
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
    try:
        export = tables.export_format(request)
    except tables.BadTableRequest as error:
        return tables.bad_request(error)
    if export:
        rows = workload_export(request.viewer, request.GET, limit=tables.EXPORT_LIMIT)
        return tables.export_response(WorkloadTable(rows.rows, order_by=rows.sort), export, total=rows.total)
    work = workload_page(request.viewer, request.GET, load_structure())
    table = tables.configure(WorkloadTable(work.rows, order_by=work.sort), request)
    context = {
        "work": work,
        "work_table": table,
        "viewer": request.viewer,
        "query": tables.page_query(request),
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
            "live_query": query_without(request, "live", "columns"),  # the choice is saved once, not per poll
            "state_tabs": STATE_TABS,
            "options": filter_options(request.viewer),
            "tools": tables.tools(request, table),
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
