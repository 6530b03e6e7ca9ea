"""Resource-flavor pages: every flavor's capacity and use, and one flavor's ClusterQueues."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import render

from queues.selectors.flavors import flavor_summaries
from queues.selectors.structure import load_structure
from queues.ui.views.common import DashboardRequest, dashboard_view


@dashboard_view
def flavor_list(request: DashboardRequest) -> HttpResponse:
    summaries = flavor_summaries(request.viewer, load_structure())
    return render(request, "queues/flavors/list.html", {"flavors": summaries, "viewer": request.viewer})


@dashboard_view
def flavor_detail(request: DashboardRequest, name: str) -> HttpResponse:
    summaries = flavor_summaries(request.viewer, load_structure(), name)
    if not summaries:
        raise Http404("No such flavor")
    return render(request, "queues/flavors/detail.html", {"summary": summaries[0], "viewer": request.viewer})
