"""Calendar arithmetic shared by the live budgets and the simulator: monthly renewal.

Months have no fixed length in seconds, so a monthly period is counted on the wall clock of a
time zone: the anchor's day of the month (clamped to short months: an anchor on the 31st renews
on the 30th in April and the 28th or 29th in February, and the 31st again in May) at the
anchor's wall-clock time. ``budgets.periods`` uses ``add_months`` for the live budgets; the
simulator uses ``monthly_boundaries`` to place renewals on its clock (seconds from its start).
"""

from __future__ import annotations

import calendar
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fairshare.errors import ValidationError

# Dates a budget or a scenario clock may name: far enough from datetime's year 1 and 9999 that
# periods, renewals and time-zone shifts never leave its range (year 9999 with a monthly
# renewal was "year 10000 is out of range" in every later cycle).
MIN_YEAR, MAX_YEAR = 1970, 2200
# Longest renewal period in days (about ten years); 2**31 days overflowed timedelta every cycle.
MAX_RENEWAL_DAYS = 3660


def check_year(moment: date, field: str) -> None:
    """``ValidationError`` naming ``field`` unless ``moment`` is within MIN_YEAR..MAX_YEAR."""
    if not MIN_YEAR <= moment.year <= MAX_YEAR:
        raise ValidationError(field, f"must be a date between the years {MIN_YEAR} and {MAX_YEAR}")


def add_months(moment: datetime, months: int) -> datetime:
    """Same day of the month (clamped to the month's length) and wall-clock time."""
    total = moment.year * 12 + (moment.month - 1) + months
    year, month = divmod(total, 12)
    month += 1
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return moment.replace(year=year, month=month, day=day)


def monthly_boundary(anchor: datetime, index: int, tz: tzinfo | None = None) -> datetime:
    """Start of monthly period ``index`` counted from ``anchor`` (0 is the anchor itself)."""
    local = anchor.astimezone(tz) if tz is not None else anchor
    return add_months(local, index)


def monthly_boundaries(anchor: datetime, start: datetime, tz: tzinfo | None = None) -> Iterator[float]:
    """Seconds from ``start`` of every monthly renewal after ``start``, in order (endless).

    Differences are taken in UTC, so a month spanning a daylight-saving change has its real
    length in seconds.
    """
    start_utc = start.astimezone(UTC)
    elapsed_days = (start_utc - anchor.astimezone(UTC)).total_seconds() / 86400
    index = max(0, int(elapsed_days // 31))  # at or before the period containing ``start``
    while True:
        boundary = monthly_boundary(anchor, index, tz).astimezone(UTC)
        if boundary > start_utc:
            yield (boundary - start_utc).total_seconds()
        index += 1


def parse_time_zone(value: object, field: str) -> tzinfo:
    """An IANA time zone name (``Europe/Berlin``, ``UTC``)."""
    if not isinstance(value, str) or not value or len(value) > 64:
        raise ValidationError(field, "expected an IANA time zone name such as UTC or Europe/Berlin")
    try:
        return ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValidationError(field, f"unknown time zone {value[:64]!r}") from None


def parse_moment(value: object, field: str, tz: tzinfo | None = None) -> datetime:
    """An ISO 8601 date-time with an offset (``2026-11-01T00:00:00Z``); a bare date is midnight
    in ``tz`` (UTC without one). YAML may already have turned it into a date or datetime."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime.combine(value, time(0), tz or UTC)
    elif isinstance(value, str) and len(value) <= 64:
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValidationError(
                field, f"expected an ISO 8601 date-time such as 2026-11-01T00:00:00Z, got {value!r}"
            ) from None
    else:
        raise ValidationError(field, "expected an ISO 8601 date-time such as 2026-11-01T00:00:00Z")
    if moment.tzinfo is None:
        if tz is None:
            raise ValidationError(field, "needs a UTC offset (e.g. 2026-11-01T00:00:00Z) or clock.timeZone")
        moment = moment.replace(tzinfo=tz)
    check_year(moment, field)
    return moment
