"""Django admin for budgets; saves are audited like every policy change."""

from django.contrib import admin
from django.db import models

from budgets.models import Budget
from queues.admin_audit import AuditedAdmin


@admin.register(Budget)
class BudgetAdmin(AuditedAdmin):
    list_display = ("name", "target_label", "kind", "resource", "allocated_hours", "renewal", "action")
    list_filter = ("kind", "action", "renewal")
    search_fields = ("name", "local_queue__name", "namespace__name", "cluster_queue__name", "resource")
    list_select_related = ("local_queue__namespace", "namespace", "cluster_queue")
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
