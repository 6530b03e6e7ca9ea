"""Reads for the budget pages and the API: who sees which budget, status, events, consumers
(``chips``: the budgets on the queue pages).

Visibility is the one rule (``core.access``, declared for budgets in ``budgets.models``):
staff see every budget; a tenant sees the budgets that can hold its work (on its namespaces, on
their LocalQueues, or on the ClusterQueues those LocalQueues feed). On a ClusterQueue budget shared with other tenants, a tenant sees its own workloads
among the top consumers and the rest only as one "other namespaces" total.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, NamedTuple

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.http import QueryDict

from budgets import accounting
from budgets.filtersets import BudgetFilterSet
from budgets.models import Budget, BudgetEvent, BudgetState
from budgets.status import SECONDS_PER_HOUR, STATE_LABELS, BudgetStatus, Measurement, build_status, to_hours
from core.access import Access
from core.tables import sort_alias
from queues.models import QueueHold, Workload


def visible_budgets(viewer: Access) -> QuerySet[Budget]:
    """Budgets ``viewer`` may see, with what status needs joined in (one query)."""
    return viewer.visible_to(
        Budget.objects.select_related("local_queue__namespace", "namespace", "cluster_queue", "flavor", "state")
    ).order_by("name")


def _state_of(budget: Budget) -> BudgetState | None:
    try:
        return budget.state
    except BudgetState.DoesNotExist:
        return None


def budget_status(budget: Budget, *, held: bool | None = None) -> BudgetStatus:
    """Status from the last accounting run against the current allocation (no ledger scan)."""
    state = _state_of(budget)
    measurement = None
    if state is not None and state.as_of is not None and state.period_start is not None:
        measurement = Measurement(
            as_of=state.as_of,
            period_start=state.period_start,
            period_end=state.period_end,
            used=state.used_unit_seconds,
            burn_rate=state.burn_rate,
            exhausted_at=state.exhausted_at,
        )
    if held is None:
        held = QueueHold.objects.filter(source=f"budget:{budget.pk}").exists()
    return build_status(
        budget_id=budget.pk,
        name=budget.name,
        unit=budget.unit_label,
        allocated_hours=budget.allocated_hours,
        measurement=measurement,
        held=held,
        thresholds=[float(t) for t in budget.alert_thresholds or ()],
        error=state.error if state is not None else "",
    )


def budgets_with_status(viewer: Access) -> list[tuple[Budget, BudgetStatus]]:
    """Every visible budget with its status (two queries)."""
    return _with_status(list(visible_budgets(viewer)))


def _with_status(budgets: list[Budget]) -> list[tuple[Budget, BudgetStatus]]:
    held = set(
        QueueHold.objects.filter(source__in=[f"budget:{b.pk}" for b in budgets]).values_list("source", flat=True)
    )
    return [(budget, budget_status(budget, held=f"budget:{budget.pk}" in held)) for budget in budgets]


class BudgetRow(NamedTuple):
    """A budget and its status, one row of the budget list (unpacks as ``budget, status``)."""

    budget: Budget
    status: BudgetStatus


_SEVERITY = {state: rank for rank, state in enumerate(STATE_LABELS)}  # error first, ok last
_FAR = datetime.max.replace(tzinfo=UTC)
# ``?sort=`` of the budget table. A budget's use and forecast come from its status (computed in
# Python from the stored state, no ledger scan), so the filtered list is sorted whole, then paged.
BUDGET_SORTS: dict[str, Callable[[BudgetRow], Any]] = {
    "name": lambda r: (r.budget.name,),
    "target": lambda r: (r.budget.target_label, r.budget.name),
    "kind": lambda r: (r.budget.kind, r.budget.resource, r.budget.name),
    "used": lambda r: (r.status.used_hours, r.budget.name),
    "allocated": lambda r: (r.status.allocated_hours, r.budget.name),
    "percent": lambda r: (r.status.percent, r.budget.name),
    "forecast": lambda r: (r.status.forecast_exhausted_at or _FAR, r.budget.name),
    "state": lambda r: (_SEVERITY[r.status.state], -r.status.percent, r.budget.name),
}
DEFAULT_BUDGET_SORT = "name"
BUDGET_PAGE_SIZE = 50


@dataclass
class BudgetList:
    page: Page
    rows: list[BudgetRow]  # the whole filtered, sorted list (exports); ``page`` holds this page's
    filterset: BudgetFilterSet
    sort: str


def budget_list(viewer: Access, params: QueryDict, *, page_size: int = BUDGET_PAGE_SIZE) -> BudgetList:
    """The visible budgets ``params`` filter (the API's filter names), sorted as ``?sort=`` asks
    across the whole list, one page of them (two queries, as ``budgets_with_status``)."""
    filterset = BudgetFilterSet(params, queryset=visible_budgets(viewer))
    budgets = filterset.qs if filterset.is_valid() else Budget.objects.none()
    sort = sort_alias(params.get("sort"), BUDGET_SORTS, DEFAULT_BUDGET_SORT)
    rows = sorted(
        (BudgetRow(b, s) for b, s in _with_status(list(budgets))),
        key=BUDGET_SORTS[sort.removeprefix("-")],
        reverse=sort.startswith("-"),
    )
    return BudgetList(
        page=Paginator(rows, page_size).get_page(params.get("page", 1)), rows=rows, filterset=filterset, sort=sort
    )


def budget_events(budget_id: int, *, limit: int | None = 50) -> QuerySet[BudgetEvent]:
    """Newest first; the API pages through the full list with ``limit=None``."""
    events = BudgetEvent.objects.filter(budget_id=budget_id).order_by("-at", "-id")
    return events if limit is None else events[:limit]


@dataclass(frozen=True, slots=True)
class Consumer:
    """One workload's (or the other namespaces') share of a period's usage."""

    label: str
    namespace: str
    local_queue: str
    hours: Decimal
    percent_of_used: float
    workload_id: int | None = None


def top_consumers(budget: Budget, status: BudgetStatus, viewer: Access, *, limit: int = 10) -> list[Consumer]:
    """The workloads that used most of the current period, for what ``viewer`` may see."""
    if not status.measured or status.period_start is None:
        return []
    totals = accounting.used_by_workload(budget.pk, status.period_start, status.period_end)
    workloads = {
        w.pk: w for w in Workload.objects.filter(pk__in=list(totals)).select_related("namespace", "local_queue")
    }
    used = sum(totals.values(), Decimal(0))
    consumers: list[Consumer] = []
    hidden = Decimal(0)
    for workload_id, amount in sorted(totals.items(), key=lambda item: (-item[1], item[0])):
        workload = workloads[workload_id]
        if not viewer.can_read_namespace(workload.namespace_id):
            hidden += amount
            continue
        consumers.append(
            Consumer(
                label=workload.name,
                namespace=workload.namespace.name,
                local_queue=f"{workload.namespace.name}/{workload.local_queue.name}",
                hours=to_hours(amount),
                percent_of_used=_share(amount, used),
                workload_id=workload_id,
            )
        )
    result = consumers[:limit]
    if hidden > 0:
        result.append(
            Consumer(
                label="other namespaces",
                namespace="",
                local_queue="",
                hours=to_hours(hidden),
                percent_of_used=_share(hidden, used),
            )
        )
    return result


def _share(amount: Decimal, total: Decimal) -> float:
    return round(float(amount * 100 / total), 1) if total > 0 else 0.0


@dataclass(frozen=True, slots=True)
class BurnFigures:
    """The arithmetic behind a budget's burn rate, as the page shows it.

    ``rate_per_hour == charged_hours / window hours`` (``accounting.burn_rate``), the rate the
    forecast uses; ``now_per_hour`` is what the ledger charges per hour at ``as_of`` (the work
    running then), so a rate still high from a burst that has ended reads as such.
    """

    window_start: datetime
    window_end: datetime
    charged_hours: Decimal
    rate_per_hour: Decimal
    now_per_hour: Decimal

    @property
    def window_seconds(self) -> int:
        return int((self.window_end - self.window_start).total_seconds())


def burn_figures(budget: Budget, status: BudgetStatus, *, window_seconds: int) -> BurnFigures | None:
    """The burn-rate window of the last measurement, what the ledger charged in it, and the rate
    charging at its end (three queries); None before the first measurement."""
    if not status.measured or status.period_start is None or status.as_of is None:
        return None
    start, end = accounting.burn_window(status.period_start, status.as_of, window_seconds)
    charged = accounting.used_between(budget.pk, start, end)
    last_instant = accounting.segments(budget.pk, end - timedelta(microseconds=1), end)
    now_rate = sum((segment.rate for segment in last_instant), Decimal(0))
    return BurnFigures(
        window_start=start,
        window_end=end,
        charged_hours=to_hours(charged),
        rate_per_hour=to_hours(accounting.burn_rate(charged, start, end) * SECONDS_PER_HOUR),
        now_per_hour=to_hours(now_rate * SECONDS_PER_HOUR),
    )


def usage_curve(budget: Budget, status: BudgetStatus) -> list[accounting.Segment]:
    """The current period's ledger as constant-rate stretches, for the burn-down chart."""
    if not status.measured or status.period_start is None:
        return []
    return accounting.segments(budget.pk, status.period_start, status.as_of)


def usage_for_metrics(budgets: list[Budget]) -> dict[int, Any]:
    """Used hours and exhaustion per budget for ``/metrics`` (two queries, whatever the count)."""
    from budgets.metrics import BudgetState as MetricState

    with_state = Budget.objects.filter(pk__in=[budget.pk for budget in budgets]).select_related("state")
    held = set(QueueHold.objects.filter(source__startswith="budget:").values_list("source", flat=True))
    result: dict[int, Any] = {}
    for budget in with_state:
        status = budget_status(budget, held=f"budget:{budget.pk}" in held)
        forecast = status.forecast_exhausted_at
        result[budget.pk] = MetricState(
            used_hours=float(status.used_hours),
            exhausted=status.exhausted,
            at_risk=status.state == "at_risk",
            forecast_exhausted_at=forecast.timestamp() if forecast else None,
            period_end=status.period_end.timestamp() if status.measured and status.period_end else None,
        )
    return result
