"""TimeAware fair share (KAI's proportion plugin with time-aware fairness), level by level.

At each level of the tree (cohort tree -> ClusterQueues -> namespaces -> LocalQueues), per
resource, the parent's fair share is divided among its children:

1. each child first gets ``min(deserved, demand)``; ``deserved`` is the nominal quota of a
   ClusterQueue (a child cohort's is the nominal quota of its subtree) and 0 for namespaces and
   LocalQueues, which have no quota of their own in this model;
2. the rest is handed out in rounds among the children still asking, each round's part
   proportional to ``P_i = max(0, W_i + k * (W_i - U_i))``: ``W_i`` is the child's weight
   normalised among the children still asking, ``U_i`` its historical usage as a fraction of
   the parent's share (see below). If every ``P_i`` is 0 the round falls back to ``W_i``, so
   capacity that someone asks for is never left unassigned.

``U_i`` comes in as a fraction of the scope's capacity over the usage window (KAI's
normalisation). At the top level that is used as is; below, it is divided by the parent's
fraction of the capacity (``parent_share / capacity``), so a ClusterQueue that got half of the
cluster and whose two LocalQueues each used a quarter of it sees them both at ``U = 0.5``.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass, field

_EPSILON = 1e-9


@dataclass(slots=True)
class ShareNode:
    """A node of the fair-share tree; amounts in millis, ``usage`` a fraction of the scope capacity."""

    node_id: str
    weight: float
    deserved: Mapping[str, float]
    demand: Mapping[str, float]
    usage: Mapping[str, float]
    children: list[ShareNode] = field(default_factory=list)


def divide(
    total: float, weights: list[float], deserved: list[float], demand: list[float], usage: list[float], k: float
) -> list[float]:
    """Split ``total`` among siblings: deserved first, then weighted, usage-adjusted rounds."""
    count = len(weights)
    given = [max(0.0, min(d, q)) for d, q in zip(deserved, demand, strict=True)]
    first = sum(given)
    if first > total and first > 0:  # over-committed deserved quota: scale down evenly
        given = [g * total / first for g in given]
    remaining = total - sum(given)
    asking = [i for i in range(count) if demand[i] - given[i] > _EPSILON]
    while remaining > _EPSILON and asking:
        weight_sum = sum(max(0.0, weights[i]) for i in asking)
        if weight_sum > 0:
            normalised = {i: max(0.0, weights[i]) / weight_sum for i in asking}
        else:
            normalised = {i: 1.0 / len(asking) for i in asking}
        parts = {i: max(0.0, w + k * (w - usage[i])) for i, w in normalised.items()}
        part_sum = sum(parts.values())
        if part_sum <= 0:
            parts, part_sum = normalised, 1.0
        handed = 0.0
        for i in asking:
            want = demand[i] - given[i]
            give = min(remaining * parts[i] / part_sum, want)
            given[i] += give
            handed += give
        remaining -= handed
        still = [i for i in asking if demand[i] - given[i] > _EPSILON]
        if len(still) == len(asking) and handed <= _EPSILON:
            break  # nobody can take more (only zero parts left)
        asking = still
    return given


def _divide_one(total: float, weight: float, deserved: float, demand: float, usage: float, k: float) -> float:
    """``divide`` for a single child, the same operations in the same order (a one-element
    ``sum`` is ``0 + x``: the element itself, as every element here is +0.0 or more)."""
    given = max(0.0, min(deserved, demand))
    first = 0 + given
    if first > total and first > 0:
        given = given * total / first
    remaining = total - (0 + given)
    asking = demand - given > _EPSILON
    while remaining > _EPSILON and asking:
        weight_sum = 0 + max(0.0, weight)
        normalised = max(0.0, weight) / weight_sum if weight_sum > 0 else 1.0 / 1
        part = max(0.0, normalised + k * (normalised - usage))
        part_sum = 0 + part
        if part_sum <= 0:
            part, part_sum = normalised, 1.0
        want = demand - given
        give = min(remaining * part / part_sum, want)
        given += give
        handed = 0.0 + give
        remaining -= handed
        still = demand - given > _EPSILON
        if still and handed <= _EPSILON:
            break  # nobody can take more (only zero parts left)
        asking = still
    return given


def fair_shares(
    root: ShareNode, capacity: Mapping[str, float], k: float, read: Container[str] | None = None
) -> dict[str, dict[str, int]]:
    """Fair share (millis, rounded) of every node under ``root``, per resource in name order.

    ``root`` gets the whole ``capacity``; its descendants are served level by level. ``read``:
    the nodes whose shares the caller reads (None: every node); the others are computed (their
    children's depend on them) but neither rounded nor returned. Nodes that got the very same
    shares object (the zeros of subtrees without demand) get the same rounded dict: the
    result's dicts are to be read, never changed.
    """
    root_id = root.node_id
    shares: dict[str, dict[str, float]] = {root_id: {r: float(v) for r, v in sorted(capacity.items())}}
    _descend(root, shares, capacity, k)
    # Every node's share is filled in name order (the root's above, the others in
    # ``_descend``'s sorted ``resources``): rounding keeps that order.
    rounded: dict[int, dict[str, int]] = {}  # by the identity of a shares dict (all live until the return)
    result: dict[str, dict[str, int]] = {}
    for node, per in shares.items():
        if read is not None and node not in read:
            continue
        found = rounded.get(id(per))
        if found is None:
            found = rounded[id(per)] = {r: round(v) for r, v in per.items()}
        result[node] = found
    return result


def _descend(node: ShareNode, shares: dict[str, dict[str, float]], capacity: Mapping[str, float], k: float) -> None:
    below = node.children
    if not below:
        return
    mine = shares[node.node_id]
    if len(below) == 1 and below[0].demand:  # what follows for one child with demand, shorter
        only = below[0]
        resources = sorted(only.demand.keys() | mine.keys())
        if not any(mine.values()):
            _nothing(node, resources, shares)
            return
        share = shares[only.node_id] = {}
        _give_one(mine, only, share, resources, capacity, k)
        if only.children:
            _descend(only, shares, capacity, k)
        return
    resources = sorted({r for child in below for r in child.demand} | set(mine))
    if not any(mine.values()):
        _nothing(node, resources, shares)
        return
    # A child without demand (its ``demand`` empty, so its whole subtree's) gets 0 of every
    # resource from ``divide`` (it takes nothing deserved and never asks), and adding its 0 to
    # the others' sums changes none of them: it is left out of the division, and its subtree
    # gets what ``_nothing`` would give it.
    children = []
    zero = None  # the shares of the subtrees without demand (one dict: only rounded, never changed)
    for child in node.children:
        if child.demand:
            children.append(child)
            shares[child.node_id] = {}
        else:
            if zero is None:
                zero = dict.fromkeys(resources, 0.0)
            shares[child.node_id] = zero
            below = child.children
            if len(below) == 1 and not below[0].children:  # ``_idle`` of one leaf, inline
                shares[below[0].node_id] = zero
            elif below:
                _idle(child, zero, shares)
    if len(children) == 1:  # ``divide`` of one child (see ``_divide_one``)
        only = children[0]
        _give_one(mine, only, shares[only.node_id], resources, capacity, k)
        if only.children:
            _descend(only, shares, capacity, k)
        return
    if not children:
        return
    for resource in resources:
        total = mine.get(resource, 0.0)
        cap = float(capacity.get(resource, 0))
        scale = cap / total if total > 0 else 0.0
        split = divide(
            total,
            [child.weight for child in children],
            [float(child.deserved.get(resource, 0)) for child in children],
            [float(child.demand.get(resource, 0)) for child in children],
            [child.usage.get(resource, 0.0) * scale for child in children],
            k,
        )
        for child, amount in zip(children, split, strict=True):
            shares[child.node_id][resource] = amount
    for child in children:
        if child.children:
            _descend(child, shares, capacity, k)


def _give_one(
    mine: Mapping[str, float],
    only: ShareNode,
    share: dict[str, float],
    resources: list[str],
    capacity: Mapping[str, float],
    k: float,
) -> None:
    """``_descend``'s division of its node's share ``mine`` when one child (``only``) has
    demand: ``divide`` of one child per resource (see ``_divide_one``), into ``share``."""
    weight, deserved, demand, usage = only.weight, only.deserved, only.demand, only.usage
    for resource in resources:
        total = mine.get(resource, 0.0)
        cap = float(capacity.get(resource, 0))
        scale = cap / total if total > 0 else 0.0
        share[resource] = _divide_one(
            total,
            weight,
            float(deserved.get(resource, 0)),
            float(demand.get(resource, 0)),
            usage.get(resource, 0.0) * scale,
            k,
        )


def _idle(node: ShareNode, zero: dict[str, float], shares: dict[str, dict[str, float]]) -> None:
    """``_descend``'s shares below a node without demand, whose own share is ``zero`` (0 of
    each resource its parent divides): ``_nothing`` gives every node below the same, as no
    node of the subtree adds a resource to the list."""
    stack = list(node.children)
    while stack:
        current = stack.pop()
        shares[current.node_id] = zero
        stack.extend(current.children)


def _nothing(node: ShareNode, resources: list[str], shares: dict[str, dict[str, float]]) -> None:
    """``_descend`` below a node whose share is 0 for every resource: ``divide`` of 0 gives every
    child 0 (deserved first, scaled by ``0 / first``; nothing remains for the rounds), for the
    same resources as ``_descend`` lists, level by level."""
    for child in node.children:
        shares[child.node_id] = dict.fromkeys(resources, 0.0)
    for child in node.children:
        if child.children:
            _nothing(
                child, sorted({r for grandchild in child.children for r in grandchild.demand} | set(resources)), shares
            )
