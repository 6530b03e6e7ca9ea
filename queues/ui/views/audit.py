"""The audit log page: who changed which policy, when, through which surface, before and after."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render

from core import tables
from queues.selectors.audit_log import audit_export, audit_page
from queues.tables import AuditTable
from queues.ui.views.common import DashboardRequest, dashboard_view


@dashboard_view
def audit_log(request: DashboardRequest) -> HttpResponse:
    try:
        export = tables.export_format(request)
    except tables.BadTableRequest as error:
        return tables.bad_request(error)
    if export:
        rows, total, sort = audit_export(request.viewer, request.GET, limit=tables.EXPORT_LIMIT)
        return tables.export_response(AuditTable(rows, order_by=sort), export, total=total)
    page = audit_page(request.viewer, request.GET)
    table = tables.configure(AuditTable(page.rows, order_by=page.sort), request)
    if not request.viewer.is_admin:
        table.empty_text = "No changes recorded for your namespaces."
    return render(
        request,
        "queues/audit/page.html",
        {
            "audit": page,
            "table": table,
            "tools": tables.tools(request, table),
            "viewer": request.viewer,
            "query": tables.page_query(request),
        },
    )
