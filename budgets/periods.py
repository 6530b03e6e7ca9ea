"""Budget periods: where the period containing a moment starts and ends.

Pure functions (no Django), so accounting, status, the chart and the tests agree on one rule.
Periods are counted from the budget's ``anchor``: ``none`` is one endless period from the
anchor; ``weekly`` and ``days`` add whole days of local wall-clock time; ``monthly`` adds
calendar months, keeping the anchor's day of the month (clamped: an anchor on the 31st renews
on the 30th in April and on the 28th or 29th in February, and on the 31st again in May).
Wall-clock arithmetic is done in the given time zone (Python adds to an aware datetime's wall
time and zoneinfo resolves the offset afterwards), so "every month on the 1st at 00:00" stays
at midnight across daylight-saving changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

from fairshare.simulation.calendar import add_months

NONE = "none"
WEEKLY = "weekly"
MONTHLY = "monthly"
DAYS = "days"
RENEWALS = (NONE, WEEKLY, MONTHLY, DAYS)


class PeriodError(ValueError):
    """A renewal rule that cannot produce periods; names the field at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True, slots=True)
class Period:
    """``[start, end)``; ``end`` is None for a budget that never renews."""

    index: int
    start: datetime
    end: datetime | None


@dataclass(frozen=True, slots=True)
class Renewal:
    """A renewal rule: ``kind`` in ``RENEWALS``, ``days`` for ``kind == "days"``."""

    kind: str
    anchor: datetime
    days: int | None = None
    tz: tzinfo | None = None

    def __post_init__(self) -> None:
        if self.kind not in RENEWALS:
            raise PeriodError("renewal", f"expected one of {', '.join(RENEWALS)}, got {self.kind!r}")
        if self.kind == DAYS and (not isinstance(self.days, int) or self.days < 1):
            raise PeriodError("renewal_days", f"must be a whole number of at least 1, got {self.days!r}")
        if self.anchor.tzinfo is None:
            raise PeriodError("anchor", "must be an aware datetime")

    # -- boundaries ---------------------------------------------------------------------------

    def boundary(self, index: int) -> datetime:
        """Start of period ``index`` (0 is the anchor)."""
        local = self.anchor.astimezone(self.tz) if self.tz else self.anchor
        if self.kind == NONE:
            if index != 0:
                raise PeriodError("renewal", "a budget that never renews has a single period")
            return self.anchor
        if self.kind == MONTHLY:
            shifted = add_months(local, index)
        else:
            step = 7 if self.kind == WEEKLY else int(self.days or 0)
            shifted = local + timedelta(days=step * index)
        return shifted

    def period(self, index: int) -> Period:
        if self.kind == NONE:
            return Period(0, self.anchor, None)
        return Period(index, self.boundary(index), self.boundary(index + 1))

    def period_at(self, moment: datetime) -> Period:
        """The period containing ``moment``; moments before the anchor fall in period 0's
        predecessor, which accounting never asks for (nothing before the anchor is charged)."""
        if self.kind == NONE:
            return self.period(0)
        index = self._estimate(moment)
        while self.boundary(index) > moment:
            index -= 1
        while self.boundary(index + 1) <= moment:
            index += 1
        return self.period(index)

    def split(self, start: datetime, end: datetime) -> list[tuple[Period, datetime, datetime]]:
        """``[start, end)`` cut at period boundaries: one piece per period it touches."""
        pieces: list[tuple[Period, datetime, datetime]] = []
        cursor = start
        while cursor < end:
            period = self.period_at(cursor)
            stop = end if period.end is None else min(end, period.end)
            pieces.append((period, cursor, stop))
            cursor = stop
        return pieces

    def _estimate(self, moment: datetime) -> int:
        elapsed_days = (moment - self.anchor).total_seconds() / 86400
        if self.kind == MONTHLY:
            return int(elapsed_days // 30.436875)
        step = 7 if self.kind == WEEKLY else int(self.days or 1)
        return int(elapsed_days // step)
