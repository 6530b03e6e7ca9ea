"""Per-mode measures of how much a queue already has (lower goes first).

``usage.usage_score`` is the UsageBasedAdmissionFairSharing score; these are the other two.
"""

from __future__ import annotations

from collections.abc import Mapping

from queues.engine.usage import INFINITE_SCORE


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
