"""The estimated start on a pending workload's page: the playground's replay, read-only.

The workload page (queues) fetches this fragment by its url name ``workload-estimate``, routed in
``fairportal/urls.py`` so that queues never imports the playground.
"""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import render

from playground.estimate import estimate_for
from queues.selectors.structure import load_structure
from queues.selectors.workloads import workload_detail
from queues.ui.views.common import DashboardRequest, dashboard_view


@dashboard_view
def workload_estimate(request: DashboardRequest, namespace: str, name: str) -> HttpResponse:
    """The estimated start of a pending workload, as an HTML fragment the workload page fetches
    after it is drawn (the replay may take a moment; the page itself never waits for it)."""
    detail = workload_detail(request.viewer, namespace, name, load_structure())
    if detail is None:
        raise Http404("No such workload")
    return render(request, "queues/workloads/_estimate.html", {"estimate": estimate_for(detail.workload)})
