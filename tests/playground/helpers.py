"""Shared helpers of the playground tests: preset runs on the engine alone, small results."""

from __future__ import annotations

from typing import Any

from fairshare.simulation.simulator import simulate
from playground import documents
from playground.compare import capacity_of, compare
from playground.presets import get_preset


def simulate_preset(slug: str, edits: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    document = get_preset(slug).document()
    _, scenario = documents.apply_edits(document, list(edits))
    return simulate(scenario)


def preset_view(slug: str, edits: list[str] | None = None) -> dict[str, Any]:
    """The comparison view of a preset against its suggested (or the given) edits."""
    preset = get_preset(slug)
    edits = list(preset.suggested_edits if edits is None else edits)
    scenario = documents.validate(preset.document())
    return compare(
        simulate_preset(slug),
        simulate_preset(slug, edits),
        capacity=capacity_of(scenario),
        budget_labels=[budget.label for budget in scenario.budgets],
    )


def admitted_at(result: dict[str, Any], t: float = 0) -> dict[str, int]:
    """Workloads admitted at time ``t`` per LocalQueue."""
    counts: dict[str, int] = {}
    for event in result["events"]:
        if event["type"] == "admitted" and event["t"] == t:
            counts[event["localQueue"]] = counts.get(event["localQueue"], 0) + 1
    return counts
