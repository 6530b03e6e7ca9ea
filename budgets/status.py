"""Budget status as people read it: used, remaining, percent, exhaustion and its forecast.

Pure functions over numbers the accounting run measured (no queries), so the UI, the API, the
hold message and the alerts all say the same thing. Amounts inside are unit-seconds (seconds
of wall time, or resource-seconds in base units); status speaks hours.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal, localcontext

from fairshare.usage import budgets as rules

SECONDS_PER_HOUR = Decimal(3600)
_HOURS_PLACES = Decimal("0.000001")

# A budget that never resets has no "before the reset" to compare its forecast with: it is at
# risk when the forecast falls within this horizon.
AT_RISK_HORIZON = timedelta(days=7)

# The one vocabulary of a budget's state: every page, the API, /metrics and the playground use it.
# ``error``: the last accounting run failed, so usage is unknown and the budget is not enforced.
ERROR, HELD, EXHAUSTED, AT_RISK, OK = "error", "held", "exhausted", "at_risk", "ok"
STATE_LABELS = {ERROR: "error", HELD: "held", EXHAUSTED: "exhausted", AT_RISK: "at risk", OK: "ok"}
STATE_LEVELS = {ERROR: "bad", HELD: "bad", EXHAUSTED: "bad", AT_RISK: "warn", OK: "ok"}  # CSS classes


@dataclass(frozen=True, slots=True)
class Measurement:
    """What an accounting run found for the current period (unit-seconds, per second)."""

    as_of: datetime
    period_start: datetime
    period_end: datetime | None
    used: Decimal
    burn_rate: Decimal
    exhausted_at: datetime | None


@dataclass(frozen=True, slots=True)
class BudgetStatus:
    """A budget's current period against its current allocation.

    ``burn_rate_per_hour`` is units per hour charged over the burn window before ``as_of``
    (``budgets.accounting.burn_window``; for WallTime: how many workloads ran on average; for
    GPU-hours: how many GPUs). ``alert_crossed`` is the highest alert threshold reached, by the
    exact test the alerts use (``threshold_reached``). ``forecast_exhausted_at`` is when
    the remaining allocation runs out at that rate: None when nothing burns or it is already
    exhausted; ``exhausts_before_reset`` says whether that is before the period ends.
    """

    budget_id: int
    name: str
    unit: str
    measured: bool
    as_of: datetime | None
    period_start: datetime | None
    period_end: datetime | None
    allocated_hours: Decimal
    used_hours: Decimal
    remaining_hours: Decimal
    percent: float
    exhausted: bool
    exhausted_at: datetime | None
    burn_rate_per_hour: Decimal
    forecast_exhausted_at: datetime | None
    exhausts_before_reset: bool | None
    held: bool
    alert_crossed: float | None = None  # the highest alert threshold reached this period, percent
    error: str = ""  # why the last accounting run failed (``BudgetState.error``)

    @property
    def state(self) -> str:
        """``error``, ``held``, ``exhausted``, ``at_risk`` or ``ok`` (``classify``)."""
        return classify(self)[0]

    @property
    def state_reason(self) -> str:
        return classify(self)[1]

    @property
    def state_label(self) -> str:
        return STATE_LABELS[self.state]

    @property
    def level(self) -> str:
        """The state as a CSS class: bad, warn or ok."""
        return STATE_LEVELS[self.state]


def to_hours(unit_seconds: Decimal) -> Decimal:
    """Unit-seconds as hours, to the microhour (3.6 ms): display precision, not accounting."""
    with localcontext(prec=60):
        return (Decimal(unit_seconds) / SECONDS_PER_HOUR).quantize(_HOURS_PLACES, rounding=ROUND_HALF_UP)


def percent_used(used_hours: Decimal, allocated_hours: Decimal) -> float:
    """Percent of the allocation used; a zero allocation counts as fully used from the start."""
    if allocated_hours <= 0:
        return 100.0
    return float(used_hours * 100 / allocated_hours)


def is_exhausted(used_unit_seconds: Decimal, allocated_hours: Decimal) -> bool:
    """Exact comparison in unit-seconds (no rounding of either side): ``fairshare.usage.budgets``."""
    return rules.exhausted(used_unit_seconds, allocated_hours * SECONDS_PER_HOUR)


def forecast(
    as_of: datetime, used_unit_seconds: Decimal, allocated_hours: Decimal, burn_rate: Decimal
) -> datetime | None:
    """When the allocation runs out at ``burn_rate`` unit-seconds per second (None: never/already).

    ``as_of`` is the moment ``used_unit_seconds`` was measured (never the clock of the reader), and
    the arithmetic is exact to the microsecond (no float): while the usage grows at ``burn_rate``,
    every later measurement gives the same instant, so the forecast moves only when the rate does.
    """
    allocated = allocated_hours * SECONDS_PER_HOUR
    if rules.exhausted(used_unit_seconds, allocated):
        return None
    with localcontext(prec=60):
        seconds = rules.seconds_to_exhaustion(Decimal(used_unit_seconds), allocated, Decimal(burn_rate))
        if seconds is None:
            return None
        if seconds > Decimal(10 * 365 * 86400):
            return None  # a decade away: not a forecast worth showing
        microseconds = int((seconds * 1_000_000).to_integral_value(rounding=ROUND_HALF_UP))
    return as_of + timedelta(microseconds=microseconds)


def threshold_reached(used_unit_seconds: Decimal, allocated_hours: Decimal, threshold: float | int) -> bool:
    """Exact: ``used >= threshold% of allocated`` (a zero allocation counts as 100% used). The
    alerts (``ThresholdCrossed``) and the state reason both ask this, so they never disagree."""
    if allocated_hours <= 0:
        return Decimal(str(threshold)) <= 100
    return Decimal(used_unit_seconds) * 100 >= Decimal(str(threshold)) * allocated_hours * SECONDS_PER_HOUR


def highest_threshold_reached(
    used_unit_seconds: Decimal, allocated_hours: Decimal, thresholds: Iterable[float | int]
) -> float | None:
    """The highest alert threshold (percent) the usage has reached, None when none has."""
    reached = [float(t) for t in thresholds if threshold_reached(used_unit_seconds, allocated_hours, t)]
    return max(reached, default=None)


def first_crossing(
    stretches: Iterable[tuple[datetime, datetime, Decimal]], target: Decimal, base: Decimal = Decimal(0)
) -> datetime | None:
    """The first moment the running total reaches ``target``.

    ``stretches`` are ``(start, end, rate)``: ``rate`` units per second over ``[start, end)``;
    overlapping stretches add up (several workloads at once) and negative rates (corrections)
    are allowed. ``base`` is the total before the first stretch. A sweep over the moments
    where the summed rate changes, solving the one linear piece that crosses.
    """
    if base >= target:
        return None
    changes: dict[datetime, Decimal] = {}
    for start, end, rate in stretches:
        changes[start] = changes.get(start, Decimal(0)) + rate
        changes[end] = changes.get(end, Decimal(0)) - rate
    total, rate, previous = base, Decimal(0), None
    for moment in sorted(changes):
        if previous is not None:
            gained = rate * Decimal((moment - previous) // timedelta(microseconds=1)) / Decimal(1_000_000)
            if rate > 0 and total + gained >= target:
                return previous + timedelta(seconds=float((target - total) / rate))
            total += gained
        rate += changes[moment]
        previous = moment
    return None


def classify(status: BudgetStatus) -> tuple[str, str]:
    """``(state, why)``, the only place this rule lives.

    * ``error``: the last accounting run failed; its numbers are stale, so it is never ok;
    * ``held``, then ``exhausted``;
    * ``at_risk`` only from the forecast: at the burn rate the allocation runs out before the
      period resets (within ``AT_RISK_HORIZON`` for a budget that never resets). Crossing an alert
      threshold alone is not "at risk": a budget at 85% that resets tomorrow at its pace is fine;
    * ``ok`` otherwise.

    The reason names the *highest* alert threshold reached (the same exact test as the
    ``ThresholdCrossed`` alerts), whatever the state, so "past 80%" is never reported as "past 50%".
    """
    if status.error:
        return ERROR, f"{status.error}: usage is not measured and the budget is not enforced until this is fixed"
    if status.held:
        return HELD, "new work from its queues waits until the budget is raised or renews"
    if status.exhausted:
        return EXHAUSTED, "used up: the next accounting run holds its queues"
    crossed = (
        f"past its {status.alert_crossed:g}% alert threshold"
        if status.alert_crossed is not None and status.measured
        else ""
    )
    forecast_at, as_of, period_end = status.forecast_exhausted_at, status.as_of, status.period_end
    rate = f"{format_hours(status.burn_rate_per_hour)} {status.unit} per hour"
    if forecast_at is not None and as_of is not None:
        runs_out = ""
        if period_end is not None and forecast_at < period_end:
            runs_out = f"forecast to run out before the period resets, at its burn rate of {rate}"
        elif period_end is None and forecast_at - as_of <= AT_RISK_HORIZON:
            runs_out = f"forecast to run out within 7 days, at its burn rate of {rate}"
        if runs_out:
            return AT_RISK, f"{runs_out}; {crossed}" if crossed else runs_out
    if crossed:
        if period_end is None:
            return OK, f"{crossed}; not forecast to run out within 7 days"
        return OK, f"{crossed}; not forecast to run out before the period resets"
    return OK, ""


def build_status(
    *,
    budget_id: int,
    name: str,
    unit: str,
    allocated_hours: Decimal,
    measurement: Measurement | None,
    held: bool,
    thresholds: Sequence[float] = (),
    error: str = "",
) -> BudgetStatus:
    """Status from the last measurement and the *current* allocation (raising it shows at once)."""
    if measurement is None:
        return BudgetStatus(
            budget_id=budget_id,
            name=name,
            unit=unit,
            measured=False,
            as_of=None,
            period_start=None,
            period_end=None,
            allocated_hours=allocated_hours,
            used_hours=Decimal(0),
            remaining_hours=allocated_hours,
            percent=percent_used(Decimal(0), allocated_hours),
            exhausted=False,
            exhausted_at=None,
            burn_rate_per_hour=Decimal(0),
            forecast_exhausted_at=None,
            exhausts_before_reset=None,
            held=held,
            error=error,
        )
    used_hours = to_hours(measurement.used)
    exhausted = is_exhausted(measurement.used, allocated_hours)
    predicted = (
        None if exhausted else forecast(measurement.as_of, measurement.used, allocated_hours, measurement.burn_rate)
    )
    before_reset = None
    if predicted is not None:
        before_reset = measurement.period_end is None or predicted < measurement.period_end
    return BudgetStatus(
        budget_id=budget_id,
        name=name,
        unit=unit,
        measured=True,
        as_of=measurement.as_of,
        period_start=measurement.period_start,
        period_end=measurement.period_end,
        allocated_hours=allocated_hours,
        used_hours=used_hours,
        remaining_hours=max(Decimal(0), allocated_hours - used_hours),
        percent=round(percent_used(used_hours, allocated_hours), 2),
        exhausted=exhausted,
        exhausted_at=measurement.exhausted_at if exhausted else None,
        burn_rate_per_hour=to_hours(measurement.burn_rate * SECONDS_PER_HOUR),
        forecast_exhausted_at=predicted,
        exhausts_before_reset=before_reset,
        held=held,
        alert_crossed=highest_threshold_reached(measurement.used, allocated_hours, thresholds),
        error=error,
    )


def format_hours(hours: Decimal) -> str:
    """``2003.5``, ``0.17``, ``2000``: two decimals at most, no trailing zeros."""
    rounded = Decimal(hours).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    text = format(rounded, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
