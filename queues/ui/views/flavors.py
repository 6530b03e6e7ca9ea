"""Resource-flavor pages: every flavor's capacity and use, and one flavor's ClusterQueues."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import render

from core import tables
from queues.selectors.flavors import cluster_names, flavor_summaries
from queues.selectors.flavors import flavor_list as flavors_of
from queues.selectors.structure import load_structure
from queues.tables import FlavorTable
from queues.ui.views.common import DashboardRequest, dashboard_view


@dashboard_view
def flavor_list(request: DashboardRequest) -> HttpResponse:
    try:
        export = tables.export_format(request)
    except tables.BadTableRequest as error:
        return tables.bad_request(error)
    listing = flavors_of(request.viewer, load_structure(), request.GET)
    if export:
        rows = listing.rows[: tables.EXPORT_LIMIT]
        return tables.export_response(FlavorTable(rows, order_by=listing.sort), export, total=len(listing.rows))
    table = tables.configure(FlavorTable(listing.page.object_list, order_by=listing.sort), request)
    return render(
        request,
        "queues/flavors/list.html",
        {
            "flavors": listing.page.object_list,
            "listing": listing,
            "table": table,
            "tools": tables.tools(request, table),
            "query": tables.page_query(request),
            "viewer": request.viewer,
            "cluster_names": cluster_names(),
        },
    )


@dashboard_view
def flavor_detail(request: DashboardRequest, name: str) -> HttpResponse:
    summaries = flavor_summaries(request.viewer, load_structure(), name)
    if not summaries:
        raise Http404("No such flavor")
    return render(request, "queues/flavors/detail.html", {"summary": summaries[0], "viewer": request.viewer})
