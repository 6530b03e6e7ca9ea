"""Budget pages (thin: selectors read, charts draw, templates render).

A tenant sees only budgets that can hold its work; any other budget is a 404, never a 403, so
a page does not even confirm that a budget exists.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from budgets import charts, selectors
from budgets.enforcement import current_hold
from fairportal.access import access_for


@login_required
def budget_list(request: HttpRequest) -> HttpResponse:
    viewer = access_for(request.user)
    return render(request, "budgets/list.html", {"rows": selectors.budgets_with_status(viewer)})


@login_required
def budget_detail(request: HttpRequest, name: str) -> HttpResponse:
    viewer = access_for(request.user)
    budget = get_object_or_404(selectors.visible_budgets(viewer), name=name)
    hold = current_hold(budget.pk)
    status = selectors.budget_status(budget, held=hold is not None)
    chart = None
    if status.measured and status.period_start and status.as_of:
        points = charts.cumulative(selectors.usage_curve(budget, status), status.period_start, status.as_of)
        chart = charts.figure_data(charts.burn_down_figure(points, status, budget.alert_thresholds or []))
    return render(
        request,
        "budgets/detail.html",
        {
            "budget": budget,
            "status": status,
            "hold": hold,
            "chart": chart,
            "events": selectors.budget_events(budget.pk, limit=50),
            "consumers": selectors.top_consumers(budget, status, viewer),
            "burn_window": settings.BUDGET_BURN_RATE_WINDOW_SECONDS,
        },
    )
