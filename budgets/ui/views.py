"""Budget pages (thin: selectors read, charts draw, templates render).

A tenant sees only budgets that can hold its work; any other budget is a 404, never a 403, so
a page does not even confirm that a budget exists.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from budgets import accounting, selectors
from budgets.enforcement import current_hold
from budgets.models import Budget
from budgets.services import update_budget
from budgets.ui import charts
from budgets.ui.forms import BudgetForm
from core.access import access_for
from core.models import Surface
from core.versions import StaleVersion
from queues.ui.links import playground_url
from queues.ui.views.common import DashboardRequest, dashboard_view
from queues.ui.views.policy import opened_at, saving_version, stale_message, stale_page_data


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
            "burn": selectors.burn_figures(budget, status, window_seconds=settings.BUDGET_BURN_RATE_WINDOW_SECONDS),
        },
    )


@dashboard_view
def edit_budget(request: DashboardRequest, name: str) -> HttpResponse:
    """Admins change a budget through the budgets app's audited service (surface ``ui``)."""
    budget = get_object_or_404(
        Budget.objects.select_related("local_queue__namespace", "namespace", "cluster_queue"), name=name
    )
    viewer = request.viewer
    if not viewer.is_admin:
        if not viewer.visible_to(Budget).filter(pk=budget.pk).exists():
            raise Http404("No such budget")
        raise PermissionDenied("Only platform admins change budgets")
    form = BudgetForm(request.POST or None, instance=budget, initial=opened_at(request, budget, viewer))
    back = reverse("budgets:detail", args=[budget.name])
    conflict: list[str] = []
    if request.method == "POST":
        try:
            # The accounting lock first, then the row: the order an accounting run takes them.
            with saving_version(request, budget, viewer, lock_first=partial(accounting.lock_budget, budget.pk)):
                if form.is_valid():
                    changes = {field: form.cleaned_data[field] for field in form.changed_data}
                    if not changes:
                        messages.success(request, f"budget {name}: nothing changed.")
                        return redirect(back)
                    stored = Budget.objects.get(pk=budget.pk)
                    try:
                        update_budget(stored, actor=request.user, surface=Surface.UI, **changes)
                    except ValidationError as error:
                        for field, errors in error.message_dict.items():
                            form.add_error(field if field in form.fields else None, errors)
                    else:
                        messages.success(
                            request, f"Saved budget {name}: {', '.join(f.replace('_', ' ') for f in changes)} changed."
                        )
                        return redirect(back)
        except StaleVersion as stale:
            form = BudgetForm(stale_page_data(request.POST, stale.current, None), instance=budget)
            conflict = [stale_message(stale)]
    context: dict[str, Any] = {
        "obj": budget,
        "form": form,
        "formset": None,
        "label": f"budget {name} ({budget.target_label})",
        "back": back,
        "playground_url": playground_url(budget),
        "viewer": viewer,
        "non_field_errors": conflict or list(form.non_field_errors()),
    }
    status = (409 if conflict else 400) if request.method == "POST" else 200
    return render(request, "queues/policy/edit.html", context, status=status)
