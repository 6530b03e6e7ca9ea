"""Plotly figures as plain dicts: pure functions of already-read data, no database, no Plotly import.

Every function returns ``{"data": [...], "layout": {...}}``, which the page embeds as JSON and
``static/js/live.js`` hands to ``Plotly.react`` (the same dict on first load and on refresh).
Amounts come in as millis and are drawn in cores, Gi and GPUs (``queues.ui.display``); times as
datetimes, drawn as ISO strings. Keeping these pure makes them unit-testable without a browser.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from queues.selectors.shares import dominant_share
from queues.ui.display import resource_order, short_name, to_display, unit_label

if TYPE_CHECKING:
    from queues.selectors.history import Window

Figure = dict[str, Any]
TOP_WITH_SELECTOR = 40  # room above a time chart's plot for its range selector and "now"

FONT = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"
GRID = "#eef1f6"
# Every figure's look (the dashboard's and the playground's): transparent background, the page's
# font, one hover label for all series, and the legend pinned to the bottom of the figure (not
# the plot), below the axis title, so they never overlap.
THEME: dict[str, Any] = {
    "paper_bgcolor": "rgba(0,0,0,0)",
    "plot_bgcolor": "rgba(0,0,0,0)",
    "font": {"family": FONT, "size": 12, "color": "#172033"},
    "hovermode": "x unified",
    "legend": {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0},
}
COLORS = {"admitted": "#16845b", "pending": "#d48806", "entitlement": "#172033", "capacity": "#8a94a6"}
RESOURCE_COLORS = ["#4055d8", "#16845b", "#b26a00", "#9c36b5", "#0b7285", "#c2255c"]


def resource_color(resource: str, resources: Sequence[str]) -> str:
    ordered = resource_order(resources)
    index = ordered.index(resource) if resource in ordered else len(ordered)
    return RESOURCE_COLORS[index % len(RESOURCE_COLORS)]


def iso(times: Sequence[datetime]) -> list[str]:
    return [moment.isoformat() for moment in times]


def base_layout(*, y_title: str = "", percent: bool = False, height: int | None = None) -> dict[str, Any]:
    """Transparent background, light grid, legend below, one hover label for all series."""
    layout: dict[str, Any] = {
        "margin": {"l": 56, "r": 16, "t": 16, "b": 64},
        **THEME,
        # Stand-offs keep the y axis' "0" clear of the first time label at the corner.
        "xaxis": {"type": "date", "gridcolor": GRID, "zeroline": False, "ticklabelstandoff": 6, "automargin": True},
        "yaxis": {
            "title": {"text": y_title, "standoff": 8},
            "gridcolor": GRID,
            "rangemode": "tozero",
            "zeroline": False,
            "ticklabelstandoff": 6,
            "automargin": True,
        },
    }
    if percent:
        layout["yaxis"]["tickformat"] = ".0%"
    if height:
        layout["height"] = height
    return layout


@dataclass(frozen=True)
class Marker:
    """A moment worth a vertical line on a time chart: a policy change from the audit log."""

    at: datetime
    text: str


# The zoom buttons a time chart offers inside its page's window: each one only when the window
# is clearly longer, then "all" (back to the whole window). Zoom on one chart moves them all
# (static/js/live.js listens to plotly_relayout).
ZOOM_STEPS: tuple[tuple[str, int, str, timedelta], ...] = (
    ("1h", 1, "hour", timedelta(hours=1.5)),
    ("6h", 6, "hour", timedelta(hours=8)),
    ("24h", 24, "hour", timedelta(hours=30)),
    ("7d", 7, "day", timedelta(days=9)),
)
# The same across a page's figures and its live refreshes: Plotly.react then keeps a reader's zoom.
UI_REVISION = "page"


def range_selector(start: datetime, end: datetime) -> dict[str, Any]:
    """Plotly's range selector for a window ``[start, end]``: the steps shorter than it, and "all"."""
    span = end - start
    buttons: list[dict[str, Any]] = [
        {"label": label, "count": count, "step": step, "stepmode": "backward"}
        for label, count, step, needs in ZOOM_STEPS
        if span >= needs
    ]
    buttons.append({"label": "all", "step": "all"})
    return {
        "buttons": buttons,
        # top right, above the plot: the top left holds the panels' names (allocation charts)
        "x": 1,
        "xanchor": "right",
        "y": 1.0,
        "yanchor": "bottom",
        "bgcolor": "#eef1f6",
        "activecolor": "#c9d1f7",
        "font": {"size": 11, "color": "#172033"},
    }


def framed(figure: Figure, *, start: datetime, end: datetime, markers: Sequence[Marker] = ()) -> Figure:
    """Show exactly the page's window ``[start, end]`` (the same on every chart of the page), a
    "now" line at ``end``, ``markers`` (policy changes) as dotted lines with the change on hover,
    and zoom along time only: drag to zoom, a range selector above the plot, double-click back
    to the window. Charts that are not time charts (bars by flavor, empty figures) are left alone.
    """
    layout = figure["layout"]
    xaxis = layout.get("xaxis")
    if not isinstance(xaxis, dict) or xaxis.get("type") != "date":
        return figure  # not a time chart (bars), or an empty one
    xaxis["range"] = [start.isoformat(), end.isoformat()]
    xaxis["autorange"] = False
    xaxis["rangeselector"] = range_selector(start, end)
    for key, axis in layout.items():
        if key.startswith("yaxis") and isinstance(axis, dict):
            axis["fixedrange"] = True  # a drag zooms time, never the values
    layout["dragmode"] = "zoom"
    layout["uirevision"] = UI_REVISION
    layout["meta"] = {"window": [start.isoformat(), end.isoformat()]}
    margin = layout.setdefault("margin", {})
    margin["t"] = max(margin.get("t", 0), TOP_WITH_SELECTOR)
    shapes = layout.setdefault("shapes", [])
    notes = layout.setdefault("annotations", [])
    shapes.append(
        {
            "type": "line",
            "xref": "x",
            "yref": "paper",
            "x0": end.isoformat(),
            "x1": end.isoformat(),
            "y0": 0,
            "y1": 1,
            "line": {"color": "#172033", "width": 1},
        }
    )
    notes.append(
        {
            "text": "now",
            "showarrow": False,
            "xref": "x",
            "yref": "paper",
            "x": end.isoformat(),
            "y": 1,
            "xanchor": "right",
            "yanchor": "top",  # inside the plot, under the range selector
            "bgcolor": "rgba(255,255,255,0.7)",
            "font": {"size": 10, "color": "#172033"},
        }
    )
    for marker in markers:
        if not start <= marker.at <= end:
            continue
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": marker.at.isoformat(),
                "x1": marker.at.isoformat(),
                "y0": 0,
                "y1": 1,
                "line": {"color": "#9c36b5", "width": 1, "dash": "dot"},
            }
        )
        notes.append(
            {
                "text": "✎",
                "hovertext": marker.text,
                "showarrow": False,
                "xref": "x",
                "yref": "paper",
                "x": marker.at.isoformat(),
                "y": 1,
                "yanchor": "bottom",
                "font": {"size": 11, "color": "#9c36b5"},
                "captureevents": True,
            }
        )
    return figure


def frame_page(figures: Mapping[str, Figure], window: Window, markers: Sequence[Marker] = ()) -> dict[str, Figure]:
    """Every figure of one page framed to the page's one ``window`` (``history.page_window``), each
    with its text summary under ``"summary"`` (what the page prints under the chart and what a
    screen reader reads instead of the plot)."""
    framed_figures = {}
    for key, figure in figures.items():
        framed_figures[key] = framed(figure, start=window.start, end=window.end, markers=markers)
        framed_figures[key]["summary"] = summary(figure, window.label)
    return framed_figures


def summary(figure: Figure, window_label: str = "") -> str:
    """The text alternative of a figure: the window it shows, then per series its latest value
    and its peak with their times (per bar series: the total and the largest bar; per row of a
    horizontal bar chart: each part). An empty figure says why it is empty. Pure and short: at
    most ``SUMMARY_SERIES`` series are named."""
    data = figure.get("data") or []
    layout = figure.get("layout") or {}
    if not data:
        notes = [note.get("text", "") for note in layout.get("annotations", ()) if note.get("xref") == "paper"]
        return " ".join(part for part in (_sentence(window_label), *notes) if part) or "No data."
    if all(trace.get("orientation") == "h" for trace in data):
        return _bars_summary(data, layout)
    sentences = [_sentence(window_label)] if window_label else []
    for trace in data[:SUMMARY_SERIES]:
        sentences.append(_trace_summary(trace, layout))
    if len(data) > SUMMARY_SERIES:
        sentences.append(f"{len(data) - SUMMARY_SERIES} more series in the chart.")
    return " ".join(part for part in sentences if part)


SUMMARY_SERIES = 16  # an allocation chart of four resources has four series each


def _sentence(text: str) -> str:
    return (text[:1].upper() + text[1:] + ".") if text else ""


def _value(value: float, trace: Mapping[str, Any], layout: Mapping[str, Any]) -> str:
    axis = layout.get("yaxis" + str(trace.get("yaxis", "y"))[1:], {}) or {}
    if axis.get("tickformat") == ".0%":
        return f"{value:.1%}"
    unit = (trace.get("meta") or {}).get("unit", "")
    number = f"{value:.4g}" if isinstance(value, float) else str(value)
    return f"{number}×" if unit == "×" else f"{number} {unit}".strip()


def _moment(x: Any, layout: Mapping[str, Any]) -> str:
    """A time of the x axis: a date as the page shows times, or a number in the axis' unit
    (``layout.meta.x_unit``: the playground's "minutes from the start")."""
    if isinstance(x, int | float):
        unit = (layout.get("meta") or {}).get("x_unit", "")
        return f"{x:g} {unit}".strip()
    from django.utils import timezone

    return f"{timezone.localtime(datetime.fromisoformat(str(x))):%b %-d %H:%M}"


def _trace_summary(trace: Mapping[str, Any], layout: Mapping[str, Any]) -> str:
    name = (trace.get("meta") or {}).get("label") or trace.get("name") or "series"
    if trace.get("type") == "box":
        medians = ", ".join(
            f"{x} {_value(m, trace, layout)}" for x, m in zip(trace.get("x") or [], trace.get("median") or [])
        )
        return f"{name}, median: {medians}." if medians else f"{name}: no values."
    points = [(x, y) for x, y in zip(trace.get("x") or [], trace.get("y") or []) if y is not None]
    if not points:
        return f"{name}: no values."
    if trace.get("type") == "bar":
        total = sum(y for _, y in points)
        x, most = max(points, key=lambda point: point[1])
        return f"{name}: {_value(total, trace, layout)} in all, most {_value(most, trace, layout)} at {_moment(x, layout)}."
    last_x, last = points[-1]
    peak_x, peak = max(points, key=lambda point: point[1])
    if all(y == last for _, y in points):
        return f"{name}: {_value(last, trace, layout)} throughout."
    if peak == last:
        return f"{name}: {_value(last, trace, layout)} at {_moment(last_x, layout)} (latest, and the peak)."
    return (
        f"{name}: {_value(last, trace, layout)} at {_moment(last_x, layout)} (latest), "
        f"peak {_value(peak, trace, layout)} at {_moment(peak_x, layout)}."
    )


def _bars_summary(data: Sequence[Mapping[str, Any]], layout: Mapping[str, Any]) -> str:
    rows: dict[str, list[str]] = {}
    percent = (layout.get("xaxis") or {}).get("tickformat") == ".0%"
    for trace in data:
        for label, value in zip(trace.get("y") or [], trace.get("x") or []):
            text = f"{value:.0%}" if percent else f"{value:.4g}"
            rows.setdefault(str(label), []).append(f"{trace.get('name', '')} {text}".strip())
    return " ".join(f"{label}: {', '.join(parts)}." for label, parts in rows.items())


def empty_figure(message: str) -> Figure:
    """A figure with no traces and a centred note (no samples yet, nothing admitted...)."""
    layout = base_layout()
    layout["xaxis"] = {"visible": False}
    layout["yaxis"] = {"visible": False}
    layout["annotations"] = [
        {
            "text": message,
            "showarrow": False,
            "xref": "paper",
            "yref": "paper",
            "x": 0.5,
            "y": 0.5,
            "font": {"color": "#8a94a6", "size": 13},
        }
    ]
    return {"data": [], "layout": layout}


NO_SAMPLES = "No usage samples in this range yet: the sampler writes one every usageSamplingInterval."


def utilisation_figure(
    times: Sequence[datetime], allocated: Mapping[str, Sequence[float]], capacity: Mapping[str, Sequence[float]]
) -> Figure:
    """Admitted requests as a fraction of nominal capacity, one line per resource."""
    if not times:
        return empty_figure(NO_SAMPLES)
    resources = [r for r in resource_order(capacity) if any(capacity[r])]
    data = []
    for resource in resources:
        caps = capacity[resource]
        used = allocated.get(resource, [0.0] * len(times))
        values = [(u / c) if c else None for u, c in zip(used, caps)]
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": short_name(resource),
                "x": iso(times),
                "y": values,
                "line": {"color": resource_color(resource, resources), "width": 2, "shape": "hv"},
                "hovertemplate": "%{y:.1%}",
            }
        )
    return {"data": data, "layout": base_layout(y_title="of nominal capacity", percent=True)}


def fairness_figure(times: Sequence[datetime], values: Sequence[float | None]) -> Figure:
    """Jain's index over time: 1.0 when every tenant holds the same share per unit of weight."""
    if not times:
        return empty_figure(NO_SAMPLES)
    layout = base_layout(y_title="Jain index")
    layout["yaxis"].update({"range": [0, 1.05], "rangemode": "normal"})
    layout["showlegend"] = False
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines",
                "name": "Jain index",
                "x": iso(times),
                "y": list(values),
                "line": {"color": "#4055d8", "width": 2},
                "fill": "tozeroy",
                "fillcolor": "rgba(64,85,216,0.08)",
                "hovertemplate": "%{y:.3f}",
            }
        ],
        "layout": layout,
    }


def admitted_pending_figure(times: Sequence[datetime], admitted: Sequence[int], pending: Sequence[int]) -> Figure:
    """Workloads admitted and waiting at each sample."""
    if not times:
        return empty_figure(NO_SAMPLES)
    x = iso(times)
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines",
                "name": "Admitted",
                "x": x,
                "y": list(admitted),
                "line": {"color": COLORS["admitted"], "width": 2, "shape": "hv"},
                "meta": {"unit": "workloads"},
                "fill": "tozeroy",
                "fillcolor": "rgba(22,132,91,0.12)",
            },
            {
                "type": "scatter",
                "mode": "lines",
                "name": "Pending",
                "x": x,
                "y": list(pending),
                "line": {"color": COLORS["pending"], "width": 2, "shape": "hv"},
                "meta": {"unit": "workloads"},
            },
        ],
        "layout": base_layout(y_title="workloads"),
    }


def allocation_figure(
    times: Sequence[datetime],
    allocated: Mapping[str, Sequence[float]],
    consumed: Mapping[str, Sequence[float]],
    *,
    entitlement: Mapping[str, float] | None = None,
    limit: Mapping[str, Sequence[float]] | None = None,
    limit_name: str = "Nominal quota",
) -> Figure:
    """One panel per resource: admitted requests (steps), decayed usage, the entitlement and a
    limit (a ClusterQueue's nominal quota over time, a namespace's hard quota)."""
    if not times:
        return empty_figure(NO_SAMPLES)
    entitlement = entitlement or {}
    limit = limit or {}
    resources = resource_order(set(allocated) | set(consumed) | {r for r, v in entitlement.items() if v > 0})
    if not resources:
        return empty_figure("Nothing admitted in this range.")
    x = iso(times)
    count = len(resources)
    gap = 0.08 if count > 1 else 0.0
    height = (1.0 - gap * (count - 1)) / count
    layout = base_layout(height=max(260, 190 * count))
    layout.pop("yaxis")
    layout["xaxis"]["anchor"] = f"y{count}" if count > 1 else "y"
    data: list[dict[str, Any]] = []
    for index, resource in enumerate(resources):
        axis = "" if index == 0 else str(index + 1)
        top = 1.0 - index * (height + gap)
        layout[f"yaxis{axis}"] = {
            "gridcolor": GRID,
            "rangemode": "tozero",
            "domain": [max(0.0, top - height), top],
            "zeroline": False,
        }
        first = index == 0

        def trace(name: str, values: list[float | None], line: dict[str, Any], group: str) -> dict[str, Any]:
            return {
                "type": "scatter",
                "mode": "lines",
                "name": name,
                "x": x,
                "y": values,
                "yaxis": f"y{axis}",  # noqa: B023 - trace() is only called within this iteration
                "line": line,
                "legendgroup": group,
                "showlegend": first,  # noqa: B023
                "hovertemplate": f"%{{y:.3~f}} {unit_label(resource)}",  # noqa: B023
                "meta": {"label": f"{short_name(resource)} {name.lower()}", "unit": unit_label(resource)},  # noqa: B023
            }

        stored_series = (
            (allocated, "Admitted", {"color": "#4055d8", "width": 2, "shape": "hv"}, "admitted"),
            (consumed, "Decayed usage", {"color": "#b26a00", "width": 2, "dash": "dot"}, "consumed"),
        )
        for series, name, line, group in stored_series:
            if resource in series:
                data.append(trace(name, [to_display(v, resource) for v in series[resource]], line, group))
        if entitlement.get(resource, 0) > 0:
            value = to_display(entitlement[resource], resource)
            line = {"color": COLORS["entitlement"], "width": 1, "dash": "dash"}
            data.append(trace("Entitlement", [value] * len(x), line, "entitlement"))
        if resource in limit:
            line = {"color": COLORS["capacity"], "width": 1}
            data.append(trace(limit_name, [to_display(v, resource) for v in limit[resource]], line, "limit"))
        layout.setdefault("annotations", []).append(
            {
                "text": f"<b>{short_name(resource)}</b>"
                + (f" ({unit_label(resource)})" if unit_label(resource) != short_name(resource) else ""),
                "showarrow": False,
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": top,
                "xanchor": "left",
                "yanchor": "bottom",
                "font": {"size": 11, "color": "#5f6b80"},
            }
        )
    return {"data": data, "layout": layout}


def share_figure(
    times: Sequence[datetime],
    allocated: Mapping[str, Sequence[float]],
    consumed: Mapping[str, Sequence[float]],
    entitlement: Mapping[str, float],
) -> Figure:
    """Dominant share against the weighted entitlement over time (1.0 = exactly its part)."""
    if not times:
        return empty_figure(NO_SAMPLES)
    if not any(v > 0 for v in entitlement.values()):
        return empty_figure("No entitlement: weight 0 or no nominal quota above this queue.")
    now_share, usage_share = [], []
    for index in range(len(times)):
        now_share.append(dominant_share({r: v[index] for r, v in allocated.items()}, entitlement).ratio)
        usage_share.append(dominant_share({r: v[index] for r, v in consumed.items()}, entitlement).ratio)
    x = iso(times)
    layout = base_layout(y_title="× entitlement")
    layout["shapes"] = [
        {
            "type": "line",
            "xref": "paper",
            "x0": 0,
            "x1": 1,
            "y0": 1,
            "y1": 1,
            "line": {"color": COLORS["entitlement"], "width": 1, "dash": "dash"},
        }
    ]
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines",
                "name": "Admitted ÷ entitlement",
                "x": x,
                "y": now_share,
                "line": {"color": "#4055d8", "width": 2, "shape": "hv"},
                "hovertemplate": "%{y:.2f}×",
                "meta": {"unit": "×"},
            },
            {
                "type": "scatter",
                "mode": "lines",
                "name": "Decayed usage ÷ entitlement",
                "x": x,
                "y": usage_share,
                "line": {"color": "#b26a00", "width": 2, "dash": "dot"},
                "hovertemplate": "%{y:.2f}×",
                "meta": {"unit": "×"},
            },
        ],
        "layout": layout,
    }


def capacity_figure(rows: Sequence[Mapping[str, Any]]) -> Figure:
    """Per flavor and resource: admitted within quota, borrowed and free, as parts of capacity.

    ``rows`` hold ``flavor``, ``resource``, ``capacity``, ``admitted`` and ``borrowed`` (millis).
    """
    rows = [row for row in rows if row["capacity"] > 0 or row["admitted"] > 0]
    if not rows:
        return empty_figure("No quota defined yet.")
    labels = [f"{row['flavor']} · {short_name(row['resource'])}" for row in rows]

    def part(row: Mapping[str, Any], value: float) -> float:
        return value / row["capacity"] if row["capacity"] else 0.0

    within = [part(row, row["admitted"] - row["borrowed"]) for row in rows]
    borrowed = [part(row, row["borrowed"]) for row in rows]
    free = [max(0.0, 1.0 - w - b) for w, b in zip(within, borrowed)]
    text = [
        f"{to_display(row['admitted'], row['resource']):.4g} / {to_display(row['capacity'], row['resource']):.4g} "
        f"{unit_label(row['resource'])}"
        for row in rows
    ]
    layout = base_layout(height=max(180, 34 * len(rows) + 80))
    layout.update({"barmode": "stack", "hovermode": "y unified"})
    layout["xaxis"] = {
        "tickformat": ".0%",
        "gridcolor": GRID,
        "range": [0, max(1.0, max(w + b for w, b in zip(within, borrowed)))],
    }
    layout["yaxis"] = {"autorange": "reversed", "automargin": True}
    layout["margin"]["l"] = 120

    def bars(name: str, values: list[float], color: str, hover_text: list[str] | None = None) -> dict[str, Any]:
        bar = {
            "type": "bar",
            "orientation": "h",
            "name": name,
            "y": labels,
            "x": values,
            "marker": {"color": color},
            "hovertemplate": "%{x:.1%}" + (" (%{text})" if hover_text else "") + "<extra>" + name + "</extra>",
        }
        if hover_text:
            bar["text"] = hover_text
            bar["textposition"] = "none"
        return bar

    return {
        "data": [
            bars("Admitted within quota", within, "#4055d8", text),
            bars("Borrowed", borrowed, "#b26a00"),
            bars("Free", free, "#e3e7ee"),
        ],
        "layout": layout,
    }


def _time_unit(seconds: Sequence[float]) -> tuple[float, str]:
    """Minutes for waits up to two hours, hours beyond."""
    return (3600.0, "hours") if max(seconds, default=0) > 7200 else (60.0, "minutes")


def wait_figure(times: Sequence[datetime], p50: Sequence[float], p95: Sequence[float], width_label: str) -> Figure:
    """p50 and p95 wait of the admissions in each bucket (time from queueing, or from the last
    eviction, to admission)."""
    if not times:
        return empty_figure("No admissions in this range.")
    divisor, unit = _time_unit(p95)
    x = iso(times)
    layout = base_layout(y_title=f"wait ({unit})")
    layout["xaxis"]["type"] = "date"
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "p50",
                "x": x,
                "y": [v / divisor for v in p50],
                "line": {"color": "#4055d8", "width": 2, "shape": "hv"},
                "marker": {"size": 4},
                "hovertemplate": f"%{{y:.1f}} {unit} (p50, per {width_label})",
                "meta": {"label": "p50 wait", "unit": unit},
            },
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "p95",
                "x": x,
                "y": [v / divisor for v in p95],
                "line": {"color": "#b26a00", "width": 2, "shape": "hv", "dash": "dot"},
                "marker": {"size": 4},
                "hovertemplate": f"%{{y:.1f}} {unit} (p95, per {width_label})",
                "meta": {"label": "p95 wait", "unit": unit},
            },
        ],
        "layout": layout,
    }


EVICTION_COLORS = {"Preempted": "#c2255c", "BudgetExhausted": "#b26a00", "Reclaimed": "#9c36b5", "Evicted": "#8a94a6"}


def evictions_figure(times: Sequence[datetime], by_reason: Mapping[str, Sequence[int]], width_label: str) -> Figure:
    """Evictions per bucket, stacked by reason."""
    if not times:
        return empty_figure("No evictions in this range.")
    layout = base_layout(y_title="evictions")
    layout["barmode"] = "stack"
    layout["yaxis"]["dtick"] = 1 if max((sum(c) for c in zip(*by_reason.values())), default=0) < 8 else None
    if layout["yaxis"]["dtick"] is None:
        layout["yaxis"].pop("dtick")
    return {
        "data": [
            {
                "type": "bar",
                "name": reason,
                "x": iso(times),
                "y": list(counts),
                "marker": {"color": EVICTION_COLORS.get(reason, "#0b7285")},
                "hovertemplate": f"%{{y}} {reason} (per {width_label})<extra></extra>",
                "meta": {"label": f"{reason} evictions", "unit": ""},
            }
            for reason, counts in by_reason.items()
        ],
        "layout": layout,
    }
