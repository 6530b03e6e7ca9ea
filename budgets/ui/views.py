"""Budget pages (thin: selectors read, charts draw, templates render), and the admins' add,
edit and delete pages (the generic form and delete pages of ``queues.ui.views``, saving through
the budgets app's services with surface ``ui``).

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
from budgets.services import create_budget, delete_budget, update_budget
from budgets.tables import BudgetTable
from budgets.ui import charts
from budgets.ui.forms import BudgetAddForm, BudgetForm
from core import tables
from core.access import access_for
from core.models import Surface
from core.versions import StaleVersion
from queues.ui.links import playground_url
from queues.ui.views.common import DashboardRequest, dashboard_view
from queues.ui.views.edit import delete_page
from queues.ui.views.policy import edit_page, opened_at, saving_version, stale_message, stale_page_data


@login_required
def budget_list(request: HttpRequest) -> HttpResponse:
    viewer = access_for(request.user)
    try:
        export = tables.export_format(request)
    except tables.BadTableRequest as error:
        return tables.bad_request(error)
    listing = selectors.budget_list(viewer, request.GET)
    if export:
        rows = listing.rows[: tables.EXPORT_LIMIT]
        return tables.export_response(BudgetTable(rows, order_by=listing.sort), export, total=len(listing.rows))
    table = tables.configure(BudgetTable(listing.page.object_list, order_by=listing.sort), request)
    return render(
        request,
        "budgets/list.html",
        {
            "rows": listing.page.object_list,
            "listing": listing,
            "table": table,
            "tools": tables.tools(request, table),
            "query": tables.page_query(request),
            "viewer": viewer,
        },
    )


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
            "viewer": viewer,
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
        "delete_url": reverse("budgets:delete", args=[budget.name]),
        "non_field_errors": conflict or list(form.non_field_errors()),
    }
    status = (409 if conflict else 400) if request.method == "POST" else 200
    return render(request, "queues/edit/object_edit.html", context, status=status)


def _admins_only(viewer: Any, budget: Budget | None) -> None:
    """403 for a tenant who can see ``budget`` (or any signed-in user on the add page), else 404."""
    if viewer.is_admin:
        return
    if budget is None or viewer.visible_to(Budget).filter(pk=budget.pk).exists():
        raise PermissionDenied("Only platform admins add, change or delete budgets")
    raise Http404("No such budget")


@dashboard_view
def add_budget(request: DashboardRequest) -> HttpResponse:
    """Admins create a budget as the API does (``budgets.services.create_budget``), then it is measured."""
    _admins_only(request.viewer, None)
    initial: dict[str, Any] = {}
    for field in ("local_queue", "namespace", "cluster_queue"):
        if request.GET.get(field, "").isdigit():
            initial[field] = int(request.GET[field][:18])
    form = BudgetAddForm(request.POST or None, instance=Budget(), initial=initial)
    return edit_page(
        request,
        form.instance,
        form,
        None,
        label="budget",
        back=reverse("budgets:list"),
        done=lambda budget: reverse("budgets:detail", args=[budget.name]),
        save=create_budget,
    )


@dashboard_view
def delete_budget_page(request: DashboardRequest, name: str) -> HttpResponse:
    """What goes with a budget (its ledger, events, a hold it placed) and the delete, under the
    budget's accounting lock (``budgets.services.delete_budget``)."""
    budget = get_object_or_404(Budget, name=name)
    _admins_only(request.viewer, budget)
    return delete_page(
        request,
        budget,
        label=f"budget {name}",
        back=reverse("budgets:detail", args=[name]),
        done=reverse("budgets:list"),
        delete=delete_budget,
        lock_first=partial(accounting.lock_budget, budget.pk),
    )
