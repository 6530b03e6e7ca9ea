"""Burn-down chart: pure functions from ledger stretches and status to a Plotly figure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from budgets.accounting import Segment
from budgets.status import Measurement, build_status
from budgets.ui.charts import burn_down_figure, cumulative, figure_data, forecast_line

T = datetime(2026, 6, 1, tzinfo=UTC)


def hours(n: float) -> datetime:
    return T + timedelta(hours=n)


def status_for(used_hours: int, rate_per_hour: int, allocated: int, period_end: datetime | None = None):
    measurement = Measurement(
        as_of=hours(2),
        period_start=T,
        period_end=period_end,
        used=Decimal(used_hours * 3600),
        burn_rate=Decimal(rate_per_hour),
        exhausted_at=None,
    )
    return build_status(
        budget_id=1, name="b", unit="GPU-hours", allocated_hours=Decimal(allocated), measurement=measurement, held=False
    )


def test_given_overlapping_stretches_then_the_curve_has_a_corner_wherever_the_rate_changes():
    stretches = [Segment(T, hours(2), Decimal(1)), Segment(hours(1), hours(2), Decimal(2))]

    points = cumulative(stretches, T, hours(2))

    assert points == [(T, 0.0), (hours(1), 1.0), (hours(2), 4.0)]


def test_given_many_corners_then_the_curve_is_thinned_but_keeps_both_ends():
    stretches = [Segment(T + timedelta(minutes=i), T + timedelta(minutes=i + 1), Decimal(60)) for i in range(2000)]

    points = cumulative(stretches, T, T + timedelta(minutes=2000), max_points=100)

    assert len(points) == 100
    assert points[0] == (T, 0.0)
    assert points[-1] == (T + timedelta(minutes=2000), 2000.0)


def test_given_a_forecast_before_the_period_end_then_the_line_reaches_zero_at_the_forecast():
    status = status_for(used_hours=4, rate_per_hour=2, allocated=10, period_end=hours(100))

    assert forecast_line(status) == [(hours(2), 6.0), (hours(5), 0.0)]


def test_given_a_forecast_after_the_period_end_then_the_line_stops_at_the_end_with_what_is_left():
    status = status_for(used_hours=4, rate_per_hour=2, allocated=10, period_end=hours(4))

    assert forecast_line(status) == [(hours(2), 6.0), (hours(4), 2.0)]


def test_given_status_and_thresholds_then_the_figure_has_remaining_forecast_and_a_line_per_threshold():
    status = status_for(used_hours=4, rate_per_hour=2, allocated=10)

    figure = figure_data(burn_down_figure([(T, 0.0), (hours(2), 4.0)], status, [80, 100]))

    assert [trace["name"] for trace in figure["data"]] == ["remaining", "forecast"]
    assert figure["data"][0]["y"] == [10.0, 6.0]
    levels = sorted(shape["y0"] for shape in figure["layout"]["shapes"])
    assert levels == [0.0, 2.0]  # 100% and 80% used
    assert figure["layout"]["yaxis"]["title"]["text"] == "GPU-hours remaining"


def test_given_usage_late_in_the_period_then_the_chart_starts_where_it_starts_and_keeps_the_whole_period_a_click_away():
    status = status_for(used_hours=4, rate_per_hour=2, allocated=10, period_end=hours(30))
    points = [(T, 0.0), (hours(1.5), 0.0), (hours(2), 4.0)]  # nothing used in the first 1.5 h

    figure = figure_data(burn_down_figure(points, status, [80]))

    start, end = figure["layout"]["xaxis"]["range"]
    assert datetime.fromisoformat(start) == hours(1.5)
    assert datetime.fromisoformat(end) == hours(30)
    assert [b["label"] for b in figure["layout"]["xaxis"]["rangeselector"]["buttons"]] == ["whole period"]
    assert figure["layout"]["yaxis"]["fixedrange"] is True  # a drag zooms time only


def test_given_nothing_used_yet_then_the_chart_shows_the_period_from_its_start():
    status = status_for(used_hours=0, rate_per_hour=0, allocated=10, period_end=hours(30))

    figure = figure_data(burn_down_figure([(T, 0.0), (hours(2), 0.0)], status, []))

    assert datetime.fromisoformat(figure["layout"]["xaxis"]["range"][0]) == T


def test_given_a_burn_down_then_its_summary_names_what_remains_and_the_forecast_in_the_budget_unit():
    status = status_for(used_hours=4, rate_per_hour=2, allocated=10, period_end=hours(4))

    figure = figure_data(burn_down_figure([(T, 0.0), (hours(2), 4.0)], status, [80, 100]))

    assert "remaining: 6 GPU-hours at Jun 1 02:00 (latest), peak 10 GPU-hours at Jun 1 00:00." in figure["summary"]
    assert "forecast: 2 GPU-hours at Jun 1 04:00 (latest)" in figure["summary"]
