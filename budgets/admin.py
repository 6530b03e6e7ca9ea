"""Django admin for budgets; saves are audited like every policy change.

The ledger and the events are read-only here: they are written by the accounting cycle only.
"""

from typing import Any

from django.contrib import admin
from django.db import models
from django.http import HttpRequest

from budgets.models import Budget, BudgetCharge, BudgetEvent
from budgets.services import delete_budget, request_reconcile
from core.admin_base import ReadOnlyAdmin
from core.audit import AuditedAdmin
from core.models import Surface


@admin.register(Budget)
class BudgetAdmin(AuditedAdmin):
    list_display = ("name", "target_label", "kind", "resource", "allocated_hours", "renewal", "action")
    list_filter = ("kind", "action", "renewal")
    search_fields = ("name", "local_queue__name", "namespace__name", "cluster_queue__name", "resource")
    list_select_related = ("local_queue__namespace", "namespace", "cluster_queue")
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        request_reconcile(form.instance.pk)  # a raised allocation lifts the hold right away

    def delete_model(self, request: HttpRequest, obj: Budget) -> None:  # type: ignore[override]  # this admin is handed Budgets only
        delete_budget(obj, actor=request.user, surface=Surface.ADMIN)  # audited, under the budget's lock


@admin.register(BudgetCharge)
class BudgetChargeAdmin(ReadOnlyAdmin):
    list_display = (
        "budget",
        "workload",
        "kind",
        "period_start",
        "charged_from",
        "charged_to",
        "quantity",
        "unit_seconds",
    )
    list_filter = ("kind", "budget")
    list_select_related = ("budget", "workload__namespace")


@admin.register(BudgetEvent)
class BudgetEventAdmin(ReadOnlyAdmin):
    list_display = (
        "at",
        "budget",
        "kind",
        "threshold",
        "used_hours",
        "allocated_hours",
        "email_sent_at",
        "webhook_status",
    )
    list_filter = ("kind", "webhook_status", "budget")
    list_select_related = ("budget",)
