"""The glossary page: every term of ``core.glossary`` by group, the page the hover help links to."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render

from core.glossary import grouped
from queues.ui.views.common import DashboardRequest, dashboard_view


@dashboard_view
def glossary_page(request: DashboardRequest) -> HttpResponse:
    return render(request, "queues/glossary.html", {"groups": grouped(), "viewer": request.viewer})
