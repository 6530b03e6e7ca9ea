"""Period rules: where periods start and end, and how an interval is cut at their boundaries."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from budgets.periods import PeriodError, Renewal


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_given_no_renewal_then_one_endless_period_from_the_anchor():
    rule = Renewal("none", utc(2026, 1, 15))
    period = rule.period_at(utc(2030, 6, 1))
    assert (period.start, period.end) == (utc(2026, 1, 15), None)


def test_given_monthly_on_the_31st_then_short_months_clamp_and_long_months_return_to_the_31st():
    rule = Renewal("monthly", utc(2026, 1, 31, 9))
    starts = [rule.boundary(i) for i in range(5)]
    assert starts == [
        utc(2026, 1, 31, 9),
        utc(2026, 2, 28, 9),
        utc(2026, 3, 31, 9),
        utc(2026, 4, 30, 9),
        utc(2026, 5, 31, 9),
    ]


def test_given_monthly_then_the_period_containing_a_moment_is_found_both_ways_of_a_boundary():
    rule = Renewal("monthly", utc(2026, 1, 1))
    assert rule.period_at(utc(2026, 3, 31, 23, 59)).start == utc(2026, 3, 1)
    period = rule.period_at(utc(2026, 4, 1))
    assert (period.start, period.end) == (utc(2026, 4, 1), utc(2026, 5, 1))
    assert rule.period_at(utc(2027, 12, 31, 23)).start == utc(2027, 12, 1)


def test_given_weekly_and_every_n_days_then_periods_are_whole_days_from_the_anchor():
    assert Renewal("weekly", utc(2026, 1, 5)).period_at(utc(2026, 1, 20)).start == utc(2026, 1, 19)
    period = Renewal("days", utc(2026, 1, 1), days=10).period_at(utc(2026, 1, 25, 12))
    assert (period.start, period.end) == (utc(2026, 1, 21), utc(2026, 1, 31))


def test_given_a_local_time_zone_then_monthly_periods_stay_at_local_midnight_across_dst():
    berlin = ZoneInfo("Europe/Berlin")
    rule = Renewal("monthly", datetime(2026, 3, 1, tzinfo=berlin), tz=berlin)
    april = rule.period_at(datetime(2026, 4, 10, tzinfo=berlin))
    assert april.start == datetime(2026, 4, 1, tzinfo=berlin)
    assert april.start.utcoffset() == timedelta(hours=2)  # summer time began on 29 March
    assert rule.boundary(0).utcoffset() == timedelta(hours=1)


def test_given_an_interval_across_two_boundaries_when_split_then_each_period_gets_its_part():
    rule = Renewal("days", utc(2026, 1, 1), days=1)
    pieces = rule.split(utc(2026, 1, 1, 22), utc(2026, 1, 3, 2))
    assert [(p.start, a, b) for p, a, b in pieces] == [
        (utc(2026, 1, 1), utc(2026, 1, 1, 22), utc(2026, 1, 2)),
        (utc(2026, 1, 2), utc(2026, 1, 2), utc(2026, 1, 3)),
        (utc(2026, 1, 3), utc(2026, 1, 3), utc(2026, 1, 3, 2)),
    ]
    assert sum(((b - a) for _, a, b in pieces), timedelta()) == timedelta(hours=28)


@pytest.mark.parametrize(("kind", "days", "field"), [("yearly", None, "renewal"), ("days", 0, "renewal_days")])
def test_given_a_bad_rule_then_the_error_names_the_field(kind, days, field):
    with pytest.raises(PeriodError) as error:
        Renewal(kind, utc(2026, 1, 1), days=days)
    assert error.value.field == field
