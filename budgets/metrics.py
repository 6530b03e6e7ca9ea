"""Budget metrics on ``/metrics``: a collector that budgets registers with queues' exposition.

One query for the budgets plus what ``budget_usage`` reads (``selectors.usage_for_metrics``: two),
whatever the number of budgets.

Units (docs/prometheus.md): Prometheus counts time in seconds and keeps one unit per family, so a
budget's allocation and use are split by what they count: ``fairportal_budget_*_seconds`` for
``WallTime`` budgets (seconds of workload wall time), ``fairportal_budget_*_resource_seconds``
for ``ResourceHours`` budgets (the resource's base unit times seconds: core-seconds, GPU-seconds,
byte-seconds, as the ``resource`` label says). ``fairportal_budget_used_ratio`` (used over
allocated) serves both. The ``*_hours`` families of the previous release stay one more release
as deprecated aliases (``DEPRECATED_ALIASES``), their HELP saying so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from budgets.models import Budget
from queues.interop.collector import PREFIX

SECONDS_PER_HOUR = 3600.0
LABELS = ["budget", "kind", "target_kind", "target", "resource"]
# Deprecated name -> its replacements; removed in the release after the one that added the new names.
DEPRECATED_ALIASES = {
    f"{PREFIX}_budget_allocated_hours": (
        f"{PREFIX}_budget_allocated_seconds",
        f"{PREFIX}_budget_allocated_resource_seconds",
    ),
    f"{PREFIX}_budget_used_hours": (f"{PREFIX}_budget_used_seconds", f"{PREFIX}_budget_used_resource_seconds"),
}


@dataclass(frozen=True)
class BudgetState:
    """What budget accounting knows about one budget."""

    used_hours: float
    exhausted: bool
    at_risk: bool = False
    forecast_exhausted_at: float | None = None  # unix seconds
    period_end: float | None = None  # unix seconds; None: the budget never resets


# From the budgets to their accounting state; without one only the allocations are exported.
BudgetUsage = Callable[[list[Budget]], Mapping[int, BudgetState]]


class BudgetCollector(Collector):
    """Gauges per budget, read at scrape time."""

    def __init__(self, budget_usage: BudgetUsage | None = None) -> None:
        self.budget_usage = budget_usage

    def describe(self) -> Iterable[Metric]:
        return []  # no database read when the collector is registered

    def collect(self) -> Iterator[Metric]:
        yield from budget_families(self.budget_usage)


def _by_kind(name: str, what: str) -> dict[str, GaugeMetricFamily]:
    """One family per unit: ``..._seconds`` for WallTime, ``..._resource_seconds`` for ResourceHours."""
    return {
        Budget.Kind.WALL_TIME: GaugeMetricFamily(
            f"{PREFIX}_budget_{name}_seconds",
            f"Seconds of workload wall time a WallTime budget {what}",
            labels=LABELS,
        ),
        Budget.Kind.RESOURCE_HOURS: GaugeMetricFamily(
            f"{PREFIX}_budget_{name}_resource_seconds",
            f"Resource-seconds a ResourceHours budget {what}, in the resource's base unit times seconds "
            "(cpu: core-seconds, memory: byte-seconds, GPUs: GPU-seconds)",
            labels=LABELS,
        ),
    }


def _deprecated(name: str, what: str) -> GaugeMetricFamily:
    new = " or ".join(DEPRECATED_ALIASES[name])
    return GaugeMetricFamily(
        name, f"DEPRECATED, removed in the next release: use {new} (seconds). Hours {what}", labels=LABELS
    )


def budget_families(budget_usage: BudgetUsage | None) -> Iterator[Metric]:
    """``fairportal_budget_*``: allocations always; use, ratio, exhaustion, risk, forecast and
    period end with ``budget_usage``."""
    budgets = list(Budget.objects.select_related("local_queue__namespace", "namespace", "cluster_queue"))
    rows = [(budget, [budget.name, budget.kind, *_budget_target(budget), budget.resource]) for budget in budgets]
    allocated = _by_kind("allocated", "allows per period")
    allocated_hours = _deprecated(f"{PREFIX}_budget_allocated_hours", "a budget allows per period")
    for budget, values in rows:
        allocated[budget.kind].add_metric(values, float(budget.allocated_hours) * SECONDS_PER_HOUR)
        allocated_hours.add_metric(values, float(budget.allocated_hours))
    yield from allocated.values()
    yield allocated_hours
    if budget_usage is None:
        return
    states = budget_usage(budgets)
    used = _by_kind("used", "has used in its current period, as of the last accounting run")
    used_hours = _deprecated(f"{PREFIX}_budget_used_hours", "a budget has used in its current period")
    ratio = GaugeMetricFamily(
        f"{PREFIX}_budget_used_ratio",
        "Used over allocated in the current period (1: used up; absent when nothing is allocated)",
        labels=LABELS,
    )
    exhausted = GaugeMetricFamily(
        f"{PREFIX}_budget_exhausted", "1 when a budget is used up (its queue is held)", labels=LABELS
    )
    at_risk = GaugeMetricFamily(
        f"{PREFIX}_budget_at_risk",
        "1 when a budget is at risk: forecast, at its burn rate, to run out before it resets "
        "(the budget pages' state, budgets.status.classify)",
        labels=LABELS,
    )
    forecast = GaugeMetricFamily(
        f"{PREFIX}_budget_forecast_exhaustion_timestamp_seconds",
        "When a budget runs out at its recent burn rate, Unix seconds (absent when it does not burn)",
        labels=LABELS,
    )
    period_end = GaugeMetricFamily(
        f"{PREFIX}_budget_period_end_timestamp_seconds",
        "When a budget's current period ends and it resets, Unix seconds (absent when it never resets)",
        labels=LABELS,
    )
    for budget, values in rows:
        state = states.get(budget.pk)
        if state is None:
            continue
        used[budget.kind].add_metric(values, state.used_hours * SECONDS_PER_HOUR)
        used_hours.add_metric(values, state.used_hours)
        if budget.allocated_hours > 0:
            ratio.add_metric(values, state.used_hours / float(budget.allocated_hours))
        exhausted.add_metric(values, 1.0 if state.exhausted else 0.0)
        at_risk.add_metric(values, 1.0 if state.at_risk else 0.0)
        if state.forecast_exhausted_at is not None:
            forecast.add_metric(values, state.forecast_exhausted_at)
        if state.period_end is not None:
            period_end.add_metric(values, state.period_end)
    yield from used.values()
    yield from (used_hours, ratio, exhausted, at_risk, forecast, period_end)


def _budget_target(budget: Budget) -> list[str]:
    if budget.local_queue is not None:
        return ["local_queue", budget.local_queue.key]
    if budget.namespace is not None:
        return ["namespace", budget.namespace.name]
    if budget.cluster_queue is not None:
        return ["cluster_queue", budget.cluster_queue.name]
    return ["", ""]
