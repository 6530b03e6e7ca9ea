"""The audit log page: who changed which policy, when, through which surface, before and after."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render

from queues.selectors.audit_log import audit_page
from queues.ui.views.common import DashboardRequest, dashboard_view, query_without


@dashboard_view
def audit_log(request: DashboardRequest) -> HttpResponse:
    page = audit_page(request.viewer, request.GET)
    return render(
        request,
        "queues/audit/page.html",
        {"audit": page, "viewer": request.viewer, "query": query_without(request, "page")},
    )
