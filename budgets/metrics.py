"""Budget metrics on ``/metrics``: a collector that budgets registers with queues' exposition.

One query for the budgets plus what ``budget_usage`` reads (``selectors.usage_for_metrics``: two),
whatever the number of budgets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from budgets.models import Budget
from queues.interop.collector import PREFIX


@dataclass(frozen=True)
class BudgetState:
    """What budget accounting knows about one budget."""

    used_hours: float
    exhausted: bool
    at_risk: bool = False
    forecast_exhausted_at: float | None = None  # unix seconds


# From the budgets to their accounting state; without one only the allocated hours are exported.
BudgetUsage = Callable[[list[Budget]], Mapping[int, BudgetState]]


class BudgetCollector(Collector):
    """Gauges per budget, read at scrape time."""

    def __init__(self, budget_usage: BudgetUsage | None = None) -> None:
        self.budget_usage = budget_usage

    def describe(self) -> Iterable[Metric]:
        return []  # no database read when the collector is registered

    def collect(self) -> Iterator[Metric]:
        yield from budget_families(self.budget_usage)


def budget_families(budget_usage: BudgetUsage | None) -> Iterator[Metric]:
    """``fairportal_budget_*``: allocated hours always, used/exhausted/at-risk/forecast with ``budget_usage``."""
    labels = ["budget", "kind", "target_kind", "target", "resource"]
    budgets = list(Budget.objects.select_related("local_queue__namespace", "namespace", "cluster_queue"))
    allocated = GaugeMetricFamily(
        f"{PREFIX}_budget_allocated_hours",
        "Hours (wall time or resource-hours) a budget allows per period",
        labels=labels,
    )
    rows = [(budget, [budget.name, budget.kind, *_budget_target(budget), budget.resource]) for budget in budgets]
    for budget, values in rows:
        allocated.add_metric(values, float(budget.allocated_hours))
    yield allocated
    if budget_usage is None:
        return
    states = budget_usage(budgets)
    used = GaugeMetricFamily(
        f"{PREFIX}_budget_used_hours", "Hours a budget has used in its current period", labels=labels
    )
    exhausted = GaugeMetricFamily(
        f"{PREFIX}_budget_exhausted", "1 when a budget is used up (its queue is held)", labels=labels
    )
    at_risk = GaugeMetricFamily(
        f"{PREFIX}_budget_at_risk",
        "1 when a budget is at risk: past its first alert threshold or forecast to run out before it resets",
        labels=labels,
    )
    forecast = GaugeMetricFamily(
        f"{PREFIX}_budget_forecast_exhaustion_timestamp_seconds",
        "When a budget runs out at its recent burn rate (absent when it does not burn)",
        labels=labels,
    )
    for budget, values in rows:
        state = states.get(budget.pk)
        if state is not None:
            used.add_metric(values, state.used_hours)
            exhausted.add_metric(values, 1.0 if state.exhausted else 0.0)
            at_risk.add_metric(values, 1.0 if state.at_risk else 0.0)
            if state.forecast_exhausted_at is not None:
                forecast.add_metric(values, state.forecast_exhausted_at)
    yield from (used, exhausted, at_risk, forecast)


def _budget_target(budget: Budget) -> list[str]:
    if budget.local_queue is not None:
        return ["local_queue", budget.local_queue.key]
    if budget.namespace is not None:
        return ["namespace", budget.namespace.name]
    if budget.cluster_queue is not None:
        return ["cluster_queue", budget.cluster_queue.name]
    return ["", ""]
