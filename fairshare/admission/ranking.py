"""Per-mode measures of how much a queue already has (lower goes first).

``usage.usage_score`` is the UsageBasedAdmissionFairSharing score; these are the other two.
"""

from __future__ import annotations

from collections.abc import Mapping

from fairshare.usage.usage import INFINITE_SCORE


def dominant_share(alloc: Mapping[str, int], capacity: Mapping[str, int]) -> float:
    """KEP-752 / DRF dominant share: ``max_r allocated_r / capacity_r`` (0 with nothing allocated).

    An allocation of a resource the scope has no capacity for counts as +inf.
    """
    share = 0.0
    for resource, amount in alloc.items():
        if amount <= 0:
            continue
        cap = capacity.get(resource, 0)
        value = amount / cap if cap > 0 else INFINITE_SCORE
        if value > share:
            share = value
    return share


def fair_share_ratio(alloc: Mapping[str, float], share: Mapping[str, float], demand: Mapping[str, float]) -> float:
    """TimeAware order: the worst ``allocated / fair share`` over the resources a node has or wants.

    Below 1 means below its fair share (served first). A resource with no fair share counts as
    1 (at its share) while unallocated and as +inf once allocated.
    """
    worst = 0.0
    for resource in set(demand) | set(alloc):
        amount = alloc.get(resource, 0)
        fair = share.get(resource, 0)
        if fair > 0:
            value = amount / fair
        elif amount > 0:
            value = INFINITE_SCORE
        elif demand.get(resource, 0) > 0:
            value = 1.0
        else:
            continue
        if value > worst:
            worst = value
    return worst


def borrowing_share(borrowed: Mapping[str, int], lendable: Mapping[str, int]) -> float:
    """Kueue's fair-sharing dominant share of a node, unweighted: ``max_r borrowed_r / lendable_r``.

    ``borrowed`` is what the node uses above its own (subtree) quota per resource, flavors
    summed; ``lendable`` what its parent's subtree could lend it. 0 when nothing is borrowed;
    a resource with nothing lendable is skipped (as Kueue does).
    """
    share = 0.0
    for resource, amount in borrowed.items():
        cap = lendable.get(resource, 0)
        if amount > 0 and cap > 0:
            value = amount / cap
            if value > share:
                share = value
    return share


def weighted(value: float, weight: float) -> tuple[float, float]:
    """``(value / weight, tie)``: the score and what breaks ties between +inf scores.

    A weight <= 0 gives +inf for any positive value and for 0 (a weight-0 queue is never ahead
    of a weighted one); two such queues are then compared by the unweighted value (Kueue's
    ``CompareDRS`` compares how much each zero-weight node borrows).
    """
    if not weight > 0:  # also catches NaN
        return INFINITE_SCORE, value
    return value / weight, 0.0
