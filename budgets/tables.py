"""The budget list as a table (``core.tables``): rows are ``budgets.selectors.BudgetRow``,
filtered, sorted and paged by ``budgets.selectors.budget_list``; a column's name is its
``?sort=`` name (``BUDGET_SORTS``)."""

from __future__ import annotations

from typing import Any

import django_tables2 as tables
from django.template.defaultfilters import date as date_filter
from django.urls import reverse
from django.utils.html import format_html

from core.tables import ListTable
from core.timefmt import when
from queues.ui.display import number as format_number


def _date(value: Any, fmt: str) -> str:
    """As the templates' ``date`` filter (the site's time zone)."""
    return date_filter(value, fmt) if value is not None else ""


class BudgetTable(ListTable):
    key = "budgets"
    required = ("name",)

    name = tables.Column(accessor="budget__name", verbose_name="Budget", orderable=True)
    target = tables.Column(accessor="budget__target_label", orderable=True)
    kind = tables.Column(accessor="budget__kind", orderable=True)
    used = tables.Column(accessor="status__used_hours", orderable=True, initial_sort_descending=True)
    allocated = tables.Column(accessor="status__allocated_hours", orderable=True, initial_sort_descending=True)
    percent = tables.Column(accessor="status__percent", verbose_name="%", orderable=True, initial_sort_descending=True)
    period = tables.Column(accessor="status__period_start", empty_values=())
    forecast = tables.Column(accessor="status__forecast_exhausted_at", orderable=True, empty_values=())
    state = tables.Column(accessor="status__state", orderable=True)
    action = tables.Column(accessor="budget__action", visible=False)

    class Meta(ListTable.Meta):
        empty_text = "No budgets you can see."

    def render_name(self, record: Any) -> str:
        return format_html(
            '<a href="{}">{}</a>', reverse("budgets:detail", args=[record.budget.name]), record.budget.name
        )

    def value_name(self, record: Any) -> str:
        return record.budget.name

    def render_kind(self, record: Any) -> str:
        budget = record.budget
        return f"{budget.get_kind_display()}{f' · {budget.resource}' if budget.resource else ''}"

    def value_kind(self, record: Any) -> str:
        return f"{record.budget.kind}{f' {record.budget.resource}' if record.budget.resource else ''}"

    def render_used(self, record: Any) -> str:
        return f"{format_number(record.status.used_hours)} {record.status.unit}"

    def value_used(self, record: Any) -> float:
        return float(record.status.used_hours)

    def render_allocated(self, record: Any) -> str:
        return format_number(record.status.allocated_hours)

    def value_allocated(self, record: Any) -> float:
        return float(record.status.allocated_hours)

    def render_percent(self, record: Any) -> str:
        percent = record.status.percent
        return format_html(
            '<span class="meter"><span data-width="{}%"></span></span> {}%',
            f"{min(percent, 100):.0f}",
            f"{percent:.1f}",
        )

    def value_percent(self, record: Any) -> float:
        return round(record.status.percent, 1)

    def render_period(self, record: Any) -> str:
        status = record.status
        if not status.period_start:
            return "not measured yet"
        return f"{_date(status.period_start, 'Y-m-d')} → {_date(status.period_end, 'Y-m-d') or 'never resets'}"

    def value_period(self, record: Any) -> str:
        status = record.status
        if not status.period_start:
            return ""
        end = status.period_end.isoformat() if status.period_end else ""
        return f"{status.period_start.isoformat()}/{end}"

    def render_forecast(self, record: Any) -> str:
        return when(record.status.forecast_exhausted_at) or "—"

    def value_forecast(self, record: Any) -> str | None:
        moment = record.status.forecast_exhausted_at
        return moment.isoformat() if moment else None

    def render_state(self, record: Any) -> str:
        status, budget = record.status, record.budget
        held = format_html(' <span class="muted">({})</span>', budget.action) if status.held else ""
        return format_html(
            '<span class="badge {}" data-budget-state="{}" title="{}">{}</span>{}',
            status.level,
            budget.name,
            status.state_reason,
            status.state_label,
            held,
        )

    def value_state(self, record: Any) -> str:
        return record.status.state_label
