"""Plotly figures of a comparison, as plain dicts: pure functions of the stored comparison view.

Each function returns ``{"data": [...], "layout": {...}}`` (what ``Plotly.newPlot`` takes);
nothing here reads the database or imports Plotly, so the figures are unit-tested as data.
Side-by-side pairs share their axis ranges and colours, so baseline and edited read alike: the
same LocalQueue has the same colour in both, and the y axes end at the same value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from queues.ui.charts import GRID, THEME, summary  # the dashboard's look and text summaries

Figure = dict[str, Any]

PALETTE = [
    "#4055d8",
    "#16845b",
    "#b26a00",
    "#9c36b5",
    "#0b7285",
    "#c2255c",
    "#5c940d",
    "#e8590c",
    "#1864ab",
    "#862e9c",
    "#087f5b",
    "#a61e4d",
]
OTHERS_COLOR = "#adb5bd"
SIDE_COLORS = {"baseline": "#8a94a6", "edited": "#4055d8"}
SIDE_LABELS = {"baseline": "Baseline", "edited": "Edited"}
MAX_QUEUES = 12  # more LocalQueues than this are drawn as the top ones plus "others"


def time_axis(end_seconds: float) -> tuple[float, str]:
    """Divisor and axis title: minutes for runs under three hours, hours after."""
    return (60.0, "minutes from the start") if end_seconds < 3 * 3600 else (3600.0, "hours from the start")


def zoomable(layout: dict[str, Any], end_seconds: float) -> dict[str, Any]:
    """A time chart of the run: from the replay's start to its end (where its data is), zoom
    along time only, and that window in ``meta`` so a zoom on one chart of the page moves the
    others (``static/js/charts.js``) and a double-click brings them back."""
    divisor, _title = time_axis(end_seconds)
    window = [0, round(end_seconds / divisor, 4)]
    layout["xaxis"].update({"range": list(window), "autorange": False})
    layout["yaxis"]["fixedrange"] = True
    layout["dragmode"] = "zoom"
    layout["meta"] = {"window": window, "x_unit": "min" if divisor == 60.0 else "h"}
    return layout


def base_layout(*, x_title: str, y_title: str, height: int = 300) -> dict[str, Any]:
    return {
        "height": height + 40,  # the legend's own strip at the bottom
        "margin": {"l": 56, "r": 16, "t": 30, "b": 84},
        **THEME,
        # automargin: long tick labels push the titles out instead of clipping them.
        "xaxis": {
            "title": {"text": x_title, "standoff": 6},
            "gridcolor": GRID,
            "zeroline": False,
            "automargin": True,
            "ticklabelstandoff": 4,
        },
        "yaxis": {
            "title": {"text": y_title, "standoff": 6},
            "gridcolor": GRID,
            "rangemode": "tozero",
            "zeroline": False,
            "automargin": True,
            "ticklabelstandoff": 4,
        },
    }


def empty_figure(message: str) -> Figure:
    layout = base_layout(x_title="", y_title="")
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


def resources_of(view: Mapping[str, Any]) -> list[str]:
    """Resources any LocalQueue was allocated, GPUs and CPU first."""
    found: set[str] = set()
    for side in view["series"].values():
        for per in side["allocation"].values():
            found.update(per)
    first = [r for r in ("nvidia.com/gpu", "cpu", "memory") if r in found]
    return first + sorted(found - set(first))


def default_resource(view: Mapping[str, Any]) -> str | None:
    """The resource the pair of allocation charts opens on: the most utilised in the baseline."""
    resources = resources_of(view)
    if not resources:
        return None
    utilization = view.get("utilization", {}).get("baseline", {})
    return max(resources, key=lambda r: (utilization.get(r, 0.0), -resources.index(r)))


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def queue_colors(view: Mapping[str, Any], resource: str, limit: int | None = None) -> dict[str, str]:
    """The LocalQueues drawn on their own (largest mean allocation over both runs, ``MAX_QUEUES``
    of them) and their colour; the rest are summed into "others"."""
    limit = MAX_QUEUES if limit is None else limit
    totals: dict[str, float] = {}
    for side in view["series"].values():
        for key, per in side["allocation"].items():
            totals[key] = totals.get(key, 0.0) + _mean(per.get(resource, []))
    ranked = sorted((key for key, total in totals.items() if total > 0), key=lambda k: (-totals[k], k))[:limit]
    return {key: PALETTE[i % len(PALETTE)] for i, key in enumerate(sorted(ranked))}


def _x(times: Sequence[float], divisor: float) -> list[float]:
    return [round(t / divisor, 4) for t in times]


# The traces of one side of a pair, and the highest value they reach (a stacked area's top).
SideTraces = Callable[[Mapping[str, Any], list[float], dict[str, str]], tuple[list[Figure], float]]


def _pair(view: Mapping[str, Any], resource: str, *, empty: str, y_title: str, traces: SideTraces) -> dict[str, Figure]:
    """One figure per side (baseline, edited) over the same x axis, with the same y range so the
    two read side by side; ``empty`` when no LocalQueue used ``resource``."""
    colors = queue_colors(view, resource)
    if not colors:
        return {side: empty_figure(empty) for side in view["series"]}
    divisor, x_title = time_axis(max(view["end"].values()))
    figures: dict[str, Any] = {}
    peak = 0.0
    for side, series in view["series"].items():
        data, top = traces(series, _x(series["t"], divisor), colors)
        peak = max(peak, top)
        layout = zoomable(base_layout(x_title=x_title, y_title=y_title), max(view["end"].values()))
        layout["title"] = {"text": SIDE_LABELS[side], "x": 0, "font": {"size": 13}}
        figures[side] = {"data": data, "layout": layout}
    for figure in figures.values():
        figure["layout"]["yaxis"]["range"] = [0, peak * 1.05 or 1]
    return figures


def allocation_pair(view: Mapping[str, Any], resource: str) -> dict[str, Figure]:
    """Stacked admitted ``resource`` per LocalQueue over time, one figure per side, same y range."""

    def traces(series: Mapping[str, Any], x: list[float], colors: dict[str, str]) -> tuple[list[Figure], float]:
        data = []
        others = [0.0] * len(x)
        for key, per in series["allocation"].items():
            values = per.get(resource)
            if not values:
                continue
            if key in colors:
                data.append(_area(key, x, values, colors[key]))
            else:
                others = [a + b for a, b in zip(others, values, strict=True)]
        data.sort(key=lambda trace: trace["name"])
        if any(others):
            data.append(_area("others", x, others, OTHERS_COLOR))
        stacked = [sum(values) for values in zip(*(trace["y"] for trace in data), strict=True)] if data else []
        return data, max(stacked, default=0.0)

    return _pair(
        view, resource, empty=f"Nothing was allocated {resource}", y_title=f"admitted {resource}", traces=traces
    )


def _area(name: str, x: list[float], y: Sequence[float], color: str) -> dict[str, Any]:
    return {
        "type": "scatter",
        "mode": "lines",
        "name": name,
        "x": x,
        "y": list(y),
        "stackgroup": "one",
        "line": {"color": color, "width": 1, "shape": "hv"},
        "hovertemplate": "%{y:.4g}",
    }


def usage_pair(view: Mapping[str, Any], resource: str) -> dict[str, Figure]:
    """Decayed usage per LocalQueue (solid) and, where the mode computes one, its fair share
    (dotted), one figure per side, same y range."""

    def traces(series: Mapping[str, Any], x: list[float], colors: dict[str, str]) -> tuple[list[Figure], float]:
        data = []
        peak = 0.0
        for key in sorted(colors):
            usage = series["usage"].get(key, {}).get(resource)
            if usage:
                data.append(_line(key, x, usage, colors[key]))
                peak = max(peak, max(usage))
            share = series["fairShare"].get(key, {}).get(resource)
            if share:
                data.append(_line(f"{key} fair share", x, share, colors[key], dash="dot"))
                peak = max(peak, max(share))
        return data, peak

    return _pair(view, resource, empty=f"No usage of {resource}", y_title=f"decayed usage of {resource}", traces=traces)


def _line(name: str, x: list[float], y: Sequence[float], color: str, *, dash: str = "solid") -> dict[str, Any]:
    return {
        "type": "scatter",
        "mode": "lines",
        "name": name,
        "x": x,
        "y": list(y),
        "line": {"color": color, "width": 2, "dash": dash},
        "hovertemplate": "%{y:.4g}",
    }


def utilization_figure(view: Mapping[str, Any]) -> Figure:
    """Admitted over nominal capacity per resource, baseline (grey) and edited (blue) overlaid."""
    divisor, x_title = time_axis(max(view["end"].values()))
    data = []
    for side, series in view["series"].items():
        for resource, values in series["utilization"].items():
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "name": f"{SIDE_LABELS[side]} {resource}",
                    "x": _x(series["t"], divisor),
                    "y": values,
                    # the baseline wider underneath: where both runs agree, both stay visible
                    "line": {
                        "color": SIDE_COLORS[side],
                        "width": 5 if side == "baseline" else 2,
                        "shape": "hv",
                        "dash": "solid" if resource == (resources_of(view) or [""])[0] else "dot",
                    },
                    "hovertemplate": "%{y:.1%}",
                }
            )
    if not data:
        return empty_figure("No capacity in this scenario")
    layout = zoomable(base_layout(x_title=x_title, y_title="of nominal capacity"), max(view["end"].values()))
    layout["yaxis"]["tickformat"] = ".0%"
    return {"data": data, "layout": layout}


def wait_figure(view: Mapping[str, Any]) -> Figure:
    """Wait-time distribution per tenant: box plots (min, quartiles, max; mean dashed), baseline
    and edited side by side for each tenant. Boxes come precomputed: no per-workload points."""
    tenants = [row for row in view["tenants"] if (row["baseline"] or row["edited"])]
    if not tenants:
        return empty_figure("No workloads were submitted")
    longest = max(max((row[side] or {}).get("max", 0) for side in ("baseline", "edited")) for row in tenants)
    divisor, unit = (3600.0, "hours") if longest >= 3 * 3600 else (60.0, "minutes")
    data = []
    for side in ("baseline", "edited"):
        rows = [(row["tenant"], row[side]) for row in tenants if row[side]]
        data.append(
            {
                "type": "box",
                "name": SIDE_LABELS[side],
                "x": [tenant for tenant, _ in rows],
                "q1": [stats["q1"] / divisor for _, stats in rows],
                "median": [stats["median"] / divisor for _, stats in rows],
                "q3": [stats["q3"] / divisor for _, stats in rows],
                "lowerfence": [stats["min"] / divisor for _, stats in rows],
                "upperfence": [stats["max"] / divisor for _, stats in rows],
                "mean": [stats["mean"] / divisor for _, stats in rows],
                "boxmean": True,
                "marker": {"color": SIDE_COLORS[side]},
                "meta": {"unit": unit},
            }
        )
    layout = base_layout(x_title="tenant (namespace)", y_title=f"wait ({unit})")
    layout["boxmode"] = "group"
    layout["hovermode"] = "closest"
    return {"data": data, "layout": layout}


def moved_figure(view: Mapping[str, Any]) -> Figure:
    """How many workloads started earlier, at the same time, later, or in one run only."""
    counts = view["moved"]["counts"]
    labels = [
        ("earlier", "earlier", "#16845b"),
        ("same", "same time", "#8a94a6"),
        ("later", "later", "#c2255c"),
        ("onlyEdited", "only when edited", "#4055d8"),
        ("onlyBaseline", "only in baseline", "#b26a00"),
        ("neither", "in neither", "#dee2e6"),
    ]
    shown = [(key, text, color) for key, text, color in labels if counts.get(key)]
    if not shown:
        return empty_figure("No workloads")
    layout = base_layout(x_title="workloads", y_title="", height=140)
    layout.update({"barmode": "stack", "hovermode": "closest", "margin": {"l": 16, "r": 16, "t": 8, "b": 36}})
    layout["yaxis"] = {"visible": False}
    layout["legend"] = {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0}
    return {
        "data": [
            {
                "type": "bar",
                "orientation": "h",
                "name": text,
                "y": ["starts"],
                "x": [counts[key]],
                "marker": {"color": color},
                "hovertemplate": f"{text}: %{{x}}<extra></extra>",
            }
            for key, text, color in shown
        ],
        "layout": layout,
    }


def all_figures(view: Mapping[str, Any], resource: str | None = None) -> dict[str, Figure]:
    """Every figure of the run page, keyed by the element id that draws it, each with its text
    summary under ``"summary"`` (the page's text alternative of the chart)."""
    figures = _figures(view, resource)
    for figure in figures.values():
        figure["summary"] = summary(figure)
    return figures


def _figures(view: Mapping[str, Any], resource: str | None) -> dict[str, Figure]:
    resource = resource or default_resource(view)
    figures: dict[str, Figure] = {
        "chart-utilization": utilization_figure(view),
        "chart-waits": wait_figure(view),
        "chart-moved": moved_figure(view),
    }
    if resource is None:
        for name in ("allocation", "usage"):
            for side in ("baseline", "edited"):
                figures[f"chart-{name}-{side}"] = empty_figure("Nothing was allocated")
        return figures
    for name, pair in (("allocation", allocation_pair(view, resource)), ("usage", usage_pair(view, resource))):
        for side, figure in pair.items():
            figures[f"chart-{name}-{side}"] = figure
    return figures
