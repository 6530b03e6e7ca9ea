"""Filters of the playground pages: durations, signed differences, ratios."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django import template

from queues.ui.display import duration as format_duration

register = template.Library()


@register.filter
def seconds(value: Any) -> str:
    """``5400`` -> ``1 h 30 min`` (``queues.ui.display.duration``); None -> an em dash (did not happen)."""
    if value is None or value == "":
        return "—"
    return format_duration(float(value))


@register.filter
def signed_seconds(value: Any) -> str:
    """A start that moved: ``−1 h`` earlier, ``+20 min`` later, ``0 s``."""
    if value is None:
        return "—"
    number = float(value)
    return ("+" if number > 0 else "") + format_duration(number)


@register.filter
def kpi(value: Any, unit: str) -> str:
    """A headline figure in its unit: ratios as percentages, seconds as durations."""
    if value is None:
        return "—"
    if unit == "ratio":
        return f"{float(value):.1%}"
    if unit == "seconds":
        return format_duration(float(value))
    number = float(value)
    return str(int(number)) if number.is_integer() else f"{number:.3f}"


@register.filter
def kpi_delta(value: Any, unit: str) -> str:
    """The difference as shown; one that rounds to nothing reads "no change", never "-0.0 pts"."""
    if value is None or float(value) == 0:
        return "no change"
    number = float(value)
    sign = "+" if number > 0 else "−"
    if unit == "ratio":
        text = f"{abs(number) * 100:.1f}"
        return "no change" if float(text) == 0 else f"{sign}{text} pts"
    if unit == "seconds":
        return "no change" if abs(number) < 0.5 else f"{sign}{format_duration(abs(number))}"
    text = f"{abs(number):.3g}"
    return "no change" if float(text) == 0 else f"{sign}{text}"


@register.filter
def percent(value: Any) -> str:
    return "—" if value is None else f"{float(value) * 100:.0f}%"


@register.filter
def pretty(value: Any) -> str:
    """A delta's before/after value for people: mappings and lists as compact text."""
    if value is None:
        return "—"
    if isinstance(value, dict):
        parts = []
        for key, inner in value.items():
            parts.append(f"{key}: {pretty(inner)}" if isinstance(inner, dict) else f"{key}={inner}")
        return "{" + ", ".join(parts) + "}"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


@register.filter
def get_item(mapping: Any, key: Any) -> Any:
    """``mapping[key]`` in a template (None when absent)."""
    return mapping.get(key) if hasattr(mapping, "get") else None


@register.filter
def run_window(view: Any, source: str = "") -> str:
    """What the headline figures are over: ``30 h replay`` (a run of today's cluster replays its
    history), ``30 h simulation`` otherwise; two lengths when the sides ended apart."""
    ends = (view or {}).get("end") or {}
    baseline, edited = ends.get("baseline"), ends.get("edited")
    noun = "replay" if source == "live" else "simulation"
    if baseline is None or edited is None:
        return noun
    if baseline == edited:
        return f"{format_duration(float(baseline))} {noun}"
    return f"{noun} ({format_duration(float(baseline))} baseline, {format_duration(float(edited))} edited)"


SCOPES = {
    "run": "averaged over the {}",
    "submitted": "every workload submitted in the {}",
    "end": "at the end of the {}",
    "admitted": "workloads admitted onto it in the {}",
    "placed": "workloads whose last admission placed them on it, in the {}",
}


@register.filter
def scope_text(scope: Any, window: str) -> str:
    """A headline card's "over what": ``averaged over the 30 h replay``."""
    return SCOPES.get(str(scope or "run"), SCOPES["run"]).format(window)


@register.filter
def replay_time(seconds: Any, clock_start: Any) -> str:
    """A moment of the run: ``+27 h`` from its start, and the calendar time when the scenario
    has one (``+27 h, Nov 25 14:57 UTC``)."""
    if seconds is None or seconds == "":
        return "—"
    text = "+" + format_duration(float(seconds))
    if clock_start:
        moment = datetime.fromisoformat(str(clock_start)) + timedelta(seconds=float(seconds))
        text += f", {moment:%b} {moment.day} {moment:%H:%M %Z}".rstrip()
    return text


@register.filter
def budget_sides(row: Any) -> list[dict[str, Any]]:
    """A budget row's two sides, baseline then edited (``compare.budget_rows``), each
    ``{outcome: exhausted | forecast | never, at, end}`` in the replay's time base; a row stored
    before the sides were (older runs) is read from its exhaustion and forecast fields."""
    sides = []
    for side in ("baseline", "edited"):
        stored = row.get(f"{side}Side")
        if stored is None:
            exhausted, predicted = row.get(side), row.get(f"{side}Forecast")
            outcome = "exhausted" if exhausted is not None else "forecast" if predicted is not None else "never"
            stored = {"outcome": outcome, "at": exhausted if exhausted is not None else predicted, "end": None}
        sides.append(stored)
    return sides
