"""The overview page (``/``): the cluster for admins, their own namespaces for tenants."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render

from queues.selectors import history
from queues.selectors.overview import overview_for
from queues.services.cluster import cluster_statuses
from queues.ui.views.common import DashboardRequest, dashboard_view, live_interval, live_response, wants_live


@dashboard_view
def overview(request: DashboardRequest) -> HttpResponse:
    range_name = history.parse_range(request.GET.get("range"))
    data = overview_for(request.viewer, range_name)
    context = {
        "overview": data,
        "viewer": request.viewer,
        "range": range_name,
        "ranges": history.CHOICES,
        "window": data.window,
    }
    if wants_live(request):
        fragments = {
            "overview-kpis": ("queues/overview/_kpis.html", context),
            "overview-tables": ("queues/overview/_tables.html", context),
        }
        return live_response(request, fragments, data.figures)
    page = {**context, "live_interval": live_interval(), "clusters": cluster_statuses()}
    return render(request, "queues/overview/page.html", page)
