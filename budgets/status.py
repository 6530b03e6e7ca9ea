"""Budget status as people read it: used, remaining, percent, exhaustion and its forecast.

Pure functions over numbers the accounting run measured (no queries), so the UI, the API, the
hold message and the alerts all say the same thing. Amounts inside are unit-seconds (seconds
of wall time, or resource-seconds in base units); status speaks hours.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal, localcontext

SECONDS_PER_HOUR = Decimal(3600)
_HOURS_PLACES = Decimal("0.000001")


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

    ``burn_rate_per_hour`` is units per hour over the recent window (for WallTime: how many
    workloads ran on average; for GPU-hours: how many GPUs). ``forecast_exhausted_at`` is when
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
    """Exact comparison in unit-seconds (no rounding of either side)."""
    return used_unit_seconds >= allocated_hours * SECONDS_PER_HOUR


def forecast(
    as_of: datetime, used_unit_seconds: Decimal, allocated_hours: Decimal, burn_rate: Decimal
) -> datetime | None:
    """When the allocation runs out at ``burn_rate`` unit-seconds per second (None: never/already)."""
    remaining = allocated_hours * SECONDS_PER_HOUR - used_unit_seconds
    if remaining <= 0 or burn_rate <= 0:
        return None
    seconds = remaining / burn_rate
    if seconds > Decimal(10 * 365 * 86400):
        return None  # a decade away: not a forecast worth showing
    return as_of + timedelta(seconds=float(seconds))


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


def build_status(
    *,
    budget_id: int,
    name: str,
    unit: str,
    allocated_hours: Decimal,
    measurement: Measurement | None,
    held: bool,
) -> BudgetStatus:
    """Status from the last measurement and the *current* allocation (raising it shows at once)."""
    if measurement is None:
        return BudgetStatus(
            budget_id=budget_id, name=name, unit=unit, measured=False, as_of=None, period_start=None,
            period_end=None, allocated_hours=allocated_hours, used_hours=Decimal(0),
            remaining_hours=allocated_hours, percent=percent_used(Decimal(0), allocated_hours),
            exhausted=False, exhausted_at=None, burn_rate_per_hour=Decimal(0), forecast_exhausted_at=None,
            exhausts_before_reset=None, held=held,
        )
    used_hours = to_hours(measurement.used)
    exhausted = is_exhausted(measurement.used, allocated_hours)
    predicted = None if exhausted else forecast(measurement.as_of, measurement.used, allocated_hours, measurement.burn_rate)
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
    )


def format_hours(hours: Decimal) -> str:
    """``2003.5``, ``0.17``, ``2000``: two decimals at most, no trailing zeros."""
    rounded = Decimal(hours).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    text = format(rounded, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
