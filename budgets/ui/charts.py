"""Burn-down chart of a budget period, built by pure functions (no queries, no request).

``cumulative`` turns ledger stretches into the exact polyline of hours used over time (usage
grows linearly between the moments a workload starts or stops, so the corners are enough);
``burn_down_figure`` draws what remains of the allocation, the forecast at the recent burn
rate, the alert thresholds and the moment of exhaustion. The page loads Plotly's JavaScript
from ``static/js/plotly.min.js`` (copied from the installed plotly package): nothing comes from
the internet.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import plotly.graph_objects as go

from budgets.accounting import Segment
from budgets.status import BudgetStatus
from queues.ui.charts import summary

MAX_POINTS = 500


def cumulative(
    stretches: Iterable[Segment], start: datetime, end: datetime, *, max_points: int = MAX_POINTS
) -> list[tuple[datetime, float]]:
    """``(time, hours used since start)`` at every corner of the usage curve in ``[start, end]``.

    Beyond ``max_points`` corners, evenly spaced ones are kept (always the first and the last):
    a chart of a busy month stays light, and its end point stays exact.
    """
    changes: dict[datetime, Decimal] = {}
    for stretch in stretches:
        low, high = max(stretch.start, start), min(stretch.end, end)
        if high <= low:
            continue
        changes[low] = changes.get(low, Decimal(0)) + stretch.rate
        changes[high] = changes.get(high, Decimal(0)) - stretch.rate
    changes.setdefault(start, Decimal(0))
    changes.setdefault(end, Decimal(0))
    points: list[tuple[datetime, float]] = []
    total, rate, previous = Decimal(0), Decimal(0), None
    for moment in sorted(changes):
        if previous is not None:
            total += rate * Decimal((moment - previous) // timedelta(microseconds=1)) / Decimal(1_000_000)
        points.append((moment, float(total / 3600)))
        rate += changes[moment]
        previous = moment
    return _thin(points, max_points)


def _thin(points: Sequence[tuple[datetime, float]], max_points: int) -> list[tuple[datetime, float]]:
    if len(points) <= max_points:
        return list(points)
    step = (len(points) - 1) / (max_points - 1)
    return [points[round(i * step)] for i in range(max_points)]


def forecast_line(status: BudgetStatus) -> list[tuple[datetime, float]]:
    """Remaining hours from now on at the recent burn rate, to zero or to the period's end."""
    if status.as_of is None or status.exhausted or status.burn_rate_per_hour <= 0:
        return []
    remaining = float(status.allocated_hours - status.used_hours)
    rate = float(status.burn_rate_per_hour)
    end = status.forecast_exhausted_at
    if status.period_end is not None and (end is None or end > status.period_end):
        end = status.period_end
    if end is None:
        return []
    hours = (end - status.as_of).total_seconds() / 3600
    return [(status.as_of, remaining), (end, max(0.0, remaining - rate * hours))]


def burn_down_figure(
    used_points: Sequence[tuple[datetime, float]], status: BudgetStatus, thresholds: Iterable[float | int]
) -> go.Figure:
    """Remaining allocation over the period, with forecast, thresholds and exhaustion."""
    allocated = float(status.allocated_hours)
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=[t for t, _ in used_points],
            y=[allocated - used for _, used in used_points],
            mode="lines",
            name="remaining",
            line={"color": "#2f6fdf", "width": 2},
            hovertemplate="%{x}<br>%{y:.2f} " + status.unit + " left<extra></extra>",
            meta={"unit": status.unit},
        )
    )
    forecast = forecast_line(status)
    if forecast:
        figure.add_trace(
            go.Scatter(
                x=[t for t, _ in forecast],
                y=[v for _, v in forecast],
                mode="lines",
                name="forecast",
                line={"color": "#d9822b", "dash": "dash"},
                hovertemplate="%{x}<br>%{y:.2f} " + status.unit + " left (forecast)<extra></extra>",
                meta={"unit": status.unit},
            )
        )
    for threshold in sorted(thresholds):
        level = float(status.allocated_hours * (100 - Decimal(str(threshold))) / 100)
        figure.add_hline(
            y=level,
            line={"color": "#a33" if threshold >= 100 else "#999", "dash": "dot", "width": 1},
            annotation_text=f"{threshold:g}% used",
            annotation_position="top left",
        )
    if status.exhausted_at is not None:
        figure.add_vline(x=status.exhausted_at, line={"color": "#a33", "width": 1})
        figure.add_annotation(x=status.exhausted_at, y=0, text="exhausted", showarrow=True, arrowhead=2)
    end = status.period_end or (forecast[-1][0] if forecast else status.as_of)
    start = data_start(used_points) or status.period_start
    figure.update_layout(
        margin={"l": 50, "r": 20, "t": 40, "b": 40},
        height=360,
        template="plotly_white",
        legend={"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0},
        yaxis={"title": f"{status.unit} remaining", "rangemode": "tozero", "fixedrange": True, "automargin": True},
        # From where the usage starts (the chart starts where the data starts), to the period's
        # end; "whole period" (or a drag, then a double-click back) shows the rest.
        xaxis={
            "range": [start, end] if start and end else None,
            "automargin": True,
            "rangeselector": {
                "buttons": [{"label": "whole period", "step": "all"}],
                "x": 1,
                "xanchor": "right",
                "y": 1.0,
                "yanchor": "bottom",
                "bgcolor": "#eef1f6",
                "font": {"size": 11},
            },
        },
        dragmode="zoom",
    )
    return figure


def data_start(used_points: Sequence[tuple[datetime, float]]) -> datetime | None:
    """The last moment nothing was used yet before the first usage of the period (None: none)."""
    start = None
    for moment, used in used_points:
        if used > 0:
            return start
        start = moment
    return None


def figure_data(figure: go.Figure) -> dict[str, Any]:
    """Plain JSON-ready data for ``json_script`` (Plotly's encoder handles dates and numbers),
    with its text summary under ``"summary"`` (the page's text alternative of the chart)."""
    data: dict[str, Any] = json.loads(figure.to_json())
    data["summary"] = summary(data)
    return data
