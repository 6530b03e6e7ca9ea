"""Weighted entitlement and share against it: pure arithmetic, no database.

**Entitlement** (what a queue would hold if every queue under the same parent asked for more
than its part): a ClusterQueue is entitled to its nominal quota; inside it, a namespace to the
ClusterQueue's nominal quota times its weight over the summed weights of the namespaces with a
LocalQueue there; a LocalQueue to its namespace's part times its weight over the summed weights
of that namespace's LocalQueues in the same ClusterQueue (Volcano's namespace-then-queue split,
KEP-752's LocalQueue weights). A cohort's entitlement is the nominal quota of its subtree.

**Share against entitlement** is the dominant ratio, ``max_r amount_r / entitlement_r`` over the
resources with an entitlement: 1.0 means exactly its weighted part, above 1 it holds capacity
others are entitled to (borrowed or idle capacity), below 1 it leaves part of its share unused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TypedDict

from fairshare.simulation.simulator import jain_index as engine_jain_index
from queues.ui.display import amounts


@dataclass(frozen=True)
class Share:
    """A dominant ratio and the resource it comes from (None when nothing is entitled)."""

    ratio: float | None
    resource: str | None

    @property
    def percent_capped(self) -> float:
        """For bars: 0..100, where 100 stands for twice the entitlement or more."""
        if self.ratio is None:
            return 0.0
        return max(0.0, min(self.ratio, 2.0)) * 50.0

    @property
    def level(self) -> str:
        """A CSS class: under, at (within 10%) or over the entitlement."""
        if self.ratio is None:
            return "none"
        if self.ratio > 1.1:
            return "over"
        if self.ratio >= 0.9:
            return "at"
        return "under"


NO_SHARE = Share(None, None)


def weighted_part(total: Mapping[str, float], weight: float, weight_sum: float) -> dict[str, float]:
    """``total * weight / weight_sum`` per resource; nothing when the weights sum to 0."""
    if weight_sum <= 0 or weight <= 0:
        return dict.fromkeys(total, 0.0)
    fraction = weight / weight_sum
    return {resource: float(amount) * fraction for resource, amount in total.items()}


def dominant_share(amounts: Mapping[str, float], entitlement: Mapping[str, float]) -> Share:
    """The largest ``amount / entitlement`` over resources with an entitlement above 0."""
    best: Share = NO_SHARE
    for resource, entitled in sorted(entitlement.items()):
        if entitled <= 0:
            continue
        value = float(amounts.get(resource, 0.0)) / entitled
        if best.ratio is None or value > best.ratio:
            best = Share(value, resource)
    return best


class UsageFields(TypedDict):
    allocated: list[str]
    decayed: list[str]
    share: Share
    usage_share: Share


def usage_fields(
    allocated: Mapping[str, float], consumed: Mapping[str, float] | None, entitlement: Mapping[str, float]
) -> UsageFields:
    """How every queue level shows its usage: admitted (``allocated``) and decayed (``consumed``)
    amounts, and the dominant share of each against ``entitlement``."""
    consumed = consumed or {}
    return {
        "allocated": amounts(allocated),
        "decayed": amounts(consumed),
        "share": dominant_share(allocated, entitlement),
        "usage_share": dominant_share(consumed, entitlement),
    }


def per_resource(cells: Mapping[tuple[str, str], float], into: dict[str, float] | None = None) -> dict[str, float]:
    """Amounts per (flavor, resource) summed per resource (added to ``into`` when given)."""
    total = {} if into is None else into
    for (_flavor, resource), amount in cells.items():
        total[resource] = total.get(resource, 0.0) + float(amount)
    return total


def add(into: dict[str, float], amounts: Mapping[str, float]) -> dict[str, float]:
    for resource, value in amounts.items():
        into[resource] = into.get(resource, 0.0) + float(value)
    return into


def jain_index(values: Iterable[float]) -> float:
    """Jain's fairness index, the same function the simulator's summary uses (1 = all equal)."""
    return engine_jain_index(list(values))
