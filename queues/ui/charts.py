"""Plotly figures as plain dicts: pure functions of already-read data, no database, no Plotly import.

Every function returns ``{"data": [...], "layout": {...}}``, which the page embeds as JSON and
``static/js/live.js`` hands to ``Plotly.react`` (the same dict on first load and on refresh).
Amounts come in as millis and are drawn in cores, Gi and GPUs (``queues.ui.display``); times as
datetimes, drawn as ISO strings. Keeping these pure makes them unit-testable without a browser.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from queues.selectors.shares import dominant_share
from queues.ui.display import resource_order, short_name, to_display, unit_label

Figure = dict[str, Any]

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


def framed(figure: Figure, *, start: datetime, end: datetime, markers: Sequence[Marker] = ()) -> Figure:
    """Show exactly the requested range ``[start, end]`` (not just the span of the data), a
    "now" line at ``end``, a shaded band and a note where the data begins later than ``start``,
    and ``markers`` (policy changes) as dotted lines with the change on hover."""
    layout = figure["layout"]
    xaxis = layout.get("xaxis")
    if not isinstance(xaxis, dict) or xaxis.get("type") != "date":
        return figure  # not a time chart (bars), or an empty one
    xaxis["range"] = [start.isoformat(), end.isoformat()]
    xaxis["autorange"] = False
    shapes = layout.setdefault("shapes", [])
    notes = layout.setdefault("annotations", [])
    first = _first_time(figure)
    if first is not None and first > start + (end - start) / 100:
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": "paper",
                "x0": start.isoformat(),
                "x1": first.isoformat(),
                "y0": 0,
                "y1": 1,
                "fillcolor": "rgba(138,148,166,0.10)",
                "line": {"width": 0},
                "layer": "below",
            }
        )
        notes.append(
            {
                "text": f"data from {first:%b %-d %H:%M}",
                "showarrow": False,
                "xref": "x",
                "yref": "paper",
                "x": first.isoformat(),
                "y": 1,
                "xanchor": "right",
                "yanchor": "top",
                "font": {"size": 10, "color": "#8a94a6"},
            }
        )
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
            "yanchor": "bottom",
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


def _first_time(figure: Figure) -> datetime | None:
    firsts = [trace["x"][0] for trace in figure.get("data", ()) if trace.get("x")]
    return datetime.fromisoformat(min(firsts)) if firsts else None


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
            },
            {
                "type": "scatter",
                "mode": "lines",
                "name": "Decayed usage ÷ entitlement",
                "x": x,
                "y": usage_share,
                "line": {"color": "#b26a00", "width": 2, "dash": "dot"},
                "hovertemplate": "%{y:.2f}×",
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
            }
            for reason, counts in by_reason.items()
        ],
        "layout": layout,
    }
