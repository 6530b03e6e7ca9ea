"""Quota fit: nominal quota, borrowing and lending limits, cohort-owned quota, flavor assignment.

The model is Kueue's hierarchical one. Every node (ClusterQueue or cohort) has, per
(flavor, resource): a nominal quota, optional borrowing and lending limits, and usage.

* ``subtree`` quota of a node = its own nominal + what its children lend up
  (``child.subtree - child.guaranteed``). A cohort's own quota is therefore capacity shared by
  its whole subtree.
* ``guaranteed`` = ``subtree - lendingLimit`` (0 without a lending limit): the part a node
  keeps for itself and never lends.
* Usage above ``guaranteed`` is carried by the parent too, so ``available`` at a node is its
  unused guaranteed quota plus what its parent has available, capped by the borrowing limit.
* A root (a top cohort, or a ClusterQueue without cohort) has ``subtree - usage`` available.

``QuotaTree`` is a mutable working copy that lives for one admission pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from fairshare.types import ClusterQueue, Cohort, FlavorQuotas, Shortage

FlavorResource = tuple[str, str]


@dataclass(frozen=True, slots=True)
class FitFailure:
    """Why a request does not fit a ClusterQueue: every resource it lacks, dominant first.

    ``shortages`` is never empty. Per resource group, the shortages of the closest flavor
    (``QuotaTree.assign``); then every requested resource no flavor of the queue covers. Their
    order is ``Shortage.dominance_key``: what waiting cannot cure first, then the largest
    missing fraction of the request, then of the queue's ceiling, then names. The single
    fields below are the dominant shortage's (what callers read before all were kept).
    Unavailable flavors (their cluster is down or disabled) are never assigned: ``skipped``
    names them; a group whose every flavor is unavailable fails alone, with ``unavailable`` set.
    A bound request's failure names its cluster and the other clusters' flavors it passed over.
    """

    shortages: tuple[Shortage, ...]
    unavailable: bool = False  # every flavor that could hold it is unavailable now (its cluster is down)
    skipped: tuple[str, ...] = ()  # flavors of its groups passed over as unavailable now
    # A request bound to one cluster (``Workload.bound_cluster``) is never assigned another
    # cluster's flavor: ``bound`` names its cluster when that passed flavors over (``foreign``,
    # in queue order); ``foreign_only``: a group holds the resource only in such flavors.
    bound: str = ""
    foreign: tuple[str, ...] = ()
    foreign_only: bool = False

    @property
    def dominant(self) -> Shortage:
        return self.shortages[0]

    @property
    def resource(self) -> str:
        return self.shortages[0].resource

    @property
    def flavor(self) -> str | None:
        return self.shortages[0].flavor

    @property
    def requested(self) -> int:
        return self.shortages[0].requested

    @property
    def available(self) -> int:
        return self.shortages[0].available

    @property
    def ceiling(self) -> int:
        return self.shortages[0].ceiling

    @property
    def missing(self) -> int:
        return self.shortages[0].missing


def dominant_first(shortages: Iterable[Shortage]) -> tuple[Shortage, ...]:
    """Shortages in their reading order, the dominant one first (``Shortage.dominance_key``)."""
    return tuple(sorted(shortages, key=Shortage.dominance_key))


class _Node:
    __slots__ = ("borrowing", "guaranteed", "lending", "name", "nominal", "parent", "subtree", "usage")

    def __init__(self, name: str) -> None:
        self.name = name
        self.parent: _Node | None = None
        self.nominal: dict[FlavorResource, int] = {}
        self.borrowing: dict[FlavorResource, int] = {}
        self.lending: dict[FlavorResource, int] = {}
        self.subtree: dict[FlavorResource, int] = {}
        self.guaranteed: dict[FlavorResource, int] = {}
        self.usage: dict[FlavorResource, int] = {}


def resource_groups(quotas: Iterable[FlavorQuotas]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Kueue's resource groups: flavors covering the same resources, in the queue's flavor order.

    Returns ``[(resources, flavors)]``; a workload gets one flavor per group for all the
    group's resources it requests.
    """
    groups: dict[tuple[str, ...], list[str]] = {}
    for flavor_quotas in quotas:
        covered = tuple(sorted(flavor_quotas.resources))
        groups.setdefault(covered, []).append(flavor_quotas.flavor)
    return [(covered, tuple(flavors)) for covered, flavors in groups.items()]


class QuotaTree:
    """Quota and usage of every cohort and ClusterQueue, with Kueue's available/add/remove rules."""

    def __init__(
        self,
        cohorts: Iterable[Cohort],
        cluster_queues: Iterable[ClusterQueue],
        unavailable: frozenset[str] = frozenset(),
        flavor_clusters: Mapping[str, str] | None = None,
    ) -> None:
        # Flavors nothing may be assigned to now (their cluster does not answer): skipped by
        # ``assign`` and ``nominal_assignment``; their quota and usage still count as they are.
        self.unavailable = unavailable
        # Flavor -> cluster: a request bound to a cluster is assigned only that cluster's flavors.
        self.flavor_clusters: Mapping[str, str] = flavor_clusters or {}
        # Per (queue, cluster): each group's resources, the cluster's flavors, the others' flavors
        # (built on first use; the unbound entry is the groups with no flavor passed over).
        self._bound_groups: dict[tuple[str, str], list[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]]] = {}
        self._cohorts: dict[str, _Node] = {}
        self._queues: dict[str, _Node] = {}
        # Children live here, not on the nodes: nodes only point up, so a tree has no reference
        # cycles and is freed as soon as a pass drops it.
        self._children: dict[_Node, list[_Node]] = {}
        cohort_list = list(cohorts)
        for cohort in cohort_list:
            node = _Node(cohort.name)
            _load_quotas(node, cohort.quotas)
            self._cohorts[cohort.name] = node
        for cohort in cohort_list:
            if cohort.parent is not None:
                self._attach(self._cohorts[cohort.name], cohort.parent)
        self.groups: dict[str, list[tuple[tuple[str, ...], tuple[str, ...]]]] = {}
        for queue in cluster_queues:
            node = _Node(queue.name)
            _load_quotas(node, queue.quotas)
            self._queues[queue.name] = node
            if queue.cohort is not None:
                self._attach(node, queue.cohort)
            self.groups[queue.name] = resource_groups(queue.quotas)
            self._bound_groups[queue.name, ""] = [
                (covered, flavors, ()) for covered, flavors in self.groups[queue.name]
            ]
        for node in self._roots():
            _compute_subtree(node, self._children)

    def _attach(self, node: _Node, parent_name: str) -> None:
        parent = self._cohorts.get(parent_name)
        if parent is None:  # a cohort only named by its members: an implicit empty cohort
            parent = self._cohorts[parent_name] = _Node(parent_name)
        node.parent = parent
        self._children.setdefault(parent, []).append(node)

    def _roots(self) -> list[_Node]:
        return [node for node in (*self._cohorts.values(), *self._queues.values()) if node.parent is None]

    # --- reading ---------------------------------------------------------------------------

    def available(self, queue: str, fr: FlavorResource) -> int:
        """How much more of ``fr`` ClusterQueue ``queue`` can take now (may be negative if overcommitted)."""
        return _available(self._queues[queue], fr, use_usage=True)

    def usage(self, queue: str, fr: FlavorResource) -> int:
        return self._queues[queue].usage.get(fr, 0)

    def nominal(self, queue: str, fr: FlavorResource) -> int:
        return self._queues[queue].nominal.get(fr, 0)

    def is_borrowing(self, queue: str, fr: FlavorResource) -> bool:
        """Whether the queue uses more of ``fr`` than its nominal quota."""
        node = self._queues[queue]
        return node.usage.get(fr, 0) > node.nominal.get(fr, 0)

    def queue_reach(self, queue: str) -> dict[str, int]:
        """Per resource (all flavors), the most the queue could ever hold (its ceilings summed)."""
        node = self._queues[queue]
        frs = set(node.nominal)
        root = node
        while root.parent is not None:
            root = root.parent
        frs |= set(root.subtree)
        total: dict[str, int] = {}
        for fr in sorted(frs):
            total[fr[1]] = total.get(fr[1], 0) + max(0, _available(node, fr, use_usage=False))
        return total

    def subtree_nominal(self, kind: str, name: str) -> dict[str, int]:
        """Per resource, the nominal quota held in a cohort's subtree or by a ClusterQueue."""
        node = self._cohorts[name] if kind == "cohort" else self._queues[name]
        return _nominal_total(node, self._children)

    def borrowed_path(
        self, queue: str, amounts: Mapping[FlavorResource, int]
    ) -> list[tuple[str, dict[FlavorResource, int]]]:
        """What each node from the ClusterQueue up would borrow from its parent with ``amounts`` added.

        One entry per node that has a parent (the ClusterQueue, then its cohorts below the root):
        ``(parent cohort name, {flavor-resource: usage + added - subtree quota > 0})``, over every
        flavor-resource of the node, as Kueue's ``dominantResourceShare`` measures a node "after
        the candidate is admitted". The amounts climb as ``add`` would carry them (a node's
        unused guaranteed quota absorbs its part first). Nothing is changed.
        """
        node: _Node | None = self._queues[queue]
        passed = {fr: amount for fr, amount in amounts.items() if amount > 0}
        result: list[tuple[str, dict[FlavorResource, int]]] = []
        while node is not None and node.parent is not None:
            borrowed: dict[FlavorResource, int] = {}
            usage, subtree = node.usage, node.subtree
            for fr in {*subtree, *usage, *passed}:
                amount = usage.get(fr, 0) + passed.get(fr, 0) - subtree.get(fr, 0)
                if amount > 0:
                    borrowed[fr] = amount
            result.append((node.parent.name, borrowed))
            climbing: dict[FlavorResource, int] = {}
            for fr, amount in passed.items():
                rest = amount - max(0, node.guaranteed.get(fr, 0) - usage.get(fr, 0))
                if rest > 0:
                    climbing[fr] = rest
            passed = climbing
            node = node.parent
        return result

    def borrowed_now(self, kind: str, name: str) -> tuple[str | None, dict[FlavorResource, int]]:
        """A ClusterQueue's or cohort's parent cohort and what it uses above its (subtree) quota
        now, per flavor-resource (parent None: a root, which borrows from nobody)."""
        node = self._cohorts[name] if kind == "cohort" else self._queues[name]
        if node.parent is None:
            return None, {}
        borrowed = {}
        for fr in {*node.subtree, *node.usage}:
            amount = node.usage.get(fr, 0) - node.subtree.get(fr, 0)
            if amount > 0:
                borrowed[fr] = amount
        return node.parent.name, borrowed

    def lendable(self, cohort: str) -> dict[str, int]:
        """Per resource (flavors summed), the most the cohort's subtree could ever take: Kueue's
        ``calculateLendable``, the denominator of the dominant share of the cohort's children."""
        node = self._cohorts[cohort]
        root = node
        while root.parent is not None:
            root = root.parent
        total: dict[str, int] = {}
        for fr in sorted(root.subtree):
            total[fr[1]] = total.get(fr[1], 0) + max(0, _available(node, fr, use_usage=False))
        return total

    # --- assignment ------------------------------------------------------------------------

    def groups_for(
        self, queue: str, cluster: str = ""
    ) -> list[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]]:
        """The queue's resource groups as a request bound to ``cluster`` sees them ("": unbound):
        ``(resources, flavors it may be assigned in queue order, other clusters' flavors)``."""
        key = (queue, cluster)
        found = self._bound_groups.get(key)
        if found is None:
            of = self.flavor_clusters.get
            found = self._bound_groups[key] = [
                (
                    covered,
                    tuple(flavor for flavor in flavors if of(flavor) == cluster),
                    tuple(flavor for flavor in flavors if of(flavor) != cluster),
                )
                for covered, flavors in self.groups[queue]
            ]
        return found

    def assign(
        self, queue: str, requests: Mapping[str, int], cluster: str = ""
    ) -> tuple[dict[str, str] | None, FitFailure | None]:
        """First-fit flavor assignment (one flavor per resource group, flavors in queue order).

        Returns ``(assignment, None)`` when every requested resource fits, else
        ``(None, failure)`` naming every short resource: per group that does not fit, the
        shortages of its closest flavor (the one whose dominant shortage is the smallest
        fraction of its request, then the one short of fewer resources, then the first), and
        every requested resource no flavor covers. Every group is checked, so a request short
        of memory in one group and of GPUs in another names both. Unavailable
        flavors are skipped (``skipped``); a group whose every flavor is unavailable fails at once
        with ``unavailable`` set. ``cluster``: the request is bound to that cluster, only its
        flavors are tried (Kueue's order among them unchanged); a group with none fails at once
        with ``foreign_only`` set.
        """
        node = self._queues[queue]
        assignment: dict[str, str] = {}
        shortages: list[Shortage] = []
        skipped: list[str] = []
        foreign: list[str] = []
        groups = self._bound_groups[queue, ""] if not cluster else self.groups_for(queue, cluster)
        for covered, flavors, passed in groups:
            needed = [r for r in covered if requests.get(r, 0) > 0]
            if not needed:
                continue
            if passed:
                foreign.extend(passed)
                if not flavors:
                    first = needed[0]
                    return None, FitFailure(
                        (Shortage(first, None, requests[first], 0, 0),),
                        bound=cluster,
                        foreign=tuple(foreign),
                        foreign_only=True,
                    )
            best: list[Shortage] | None = None
            best_key: tuple | None = None
            chosen: str | None = None
            usable = [flavor for flavor in flavors if flavor not in self.unavailable] if self.unavailable else flavors
            if self.unavailable:
                skipped.extend(flavor for flavor in flavors if flavor not in usable)
            if not usable:
                first = needed[0]
                return None, FitFailure(
                    (Shortage(first, flavors[0], requests[first], 0, 0),),
                    unavailable=True,
                    skipped=tuple(skipped),
                    bound=cluster if foreign else "",
                    foreign=tuple(foreign),
                )
            for flavor in usable:
                short: list[Shortage] = []
                for resource in needed:
                    amount = requests[resource]
                    free = _available(node, (flavor, resource), use_usage=True)
                    if amount > free:
                        short.append(Shortage(resource, flavor, amount, free, 0))
                if not short:
                    chosen = flavor
                    break
                # Closest: the smallest worst missing fraction of the request, then fewest short.
                key = (max(Fraction(s.missing, s.requested) for s in short), len(short))
                if best_key is None or key < best_key:
                    best, best_key = short, key
            if chosen is not None:
                for resource in needed:
                    assignment[resource] = chosen
                continue
            assert best is not None
            for miss in best:
                ceiling = _available(node, (miss.flavor, miss.resource), use_usage=False)  # type: ignore[arg-type]
                shortages.append(Shortage(miss.resource, miss.flavor, miss.requested, miss.available, ceiling))
        for resource in sorted(requests):
            if (
                requests[resource] > 0
                and resource not in assignment
                and not any(resource in covered for covered, _ in self.groups[queue])
            ):
                shortages.append(Shortage(resource, None, requests[resource], 0, 0))
        if shortages:
            return None, FitFailure(
                dominant_first(shortages),
                skipped=tuple(skipped),
                bound=cluster if foreign else "",
                foreign=tuple(foreign),
            )
        return assignment, None

    def within_nominal(self, queue: str, requests: Mapping[str, int], cluster: str = "") -> bool:
        """Whether the request fits the queue's own nominal quota on top of its usage (no borrowing)."""
        return self.nominal_assignment(queue, requests, cluster) is not None

    def nominal_assignment(self, queue: str, requests: Mapping[str, int], cluster: str = "") -> dict[str, str] | None:
        """The first flavors in which the request fits the queue's own nominal quota on top of its
        usage (whether or not the cohort has that room free now: reclaim may make it), or None.
        ``cluster``: bound to that cluster (only its flavors), as ``assign``."""
        node = self._queues[queue]
        usage, nominal = node.usage, node.nominal
        assignment: dict[str, str] = {}
        for covered, flavors, _ in self.groups_for(queue, cluster):
            needed = [r for r in covered if requests.get(r, 0) > 0]
            if not needed:
                continue
            for flavor in flavors:
                if flavor in self.unavailable:
                    continue
                if all(usage.get((flavor, r), 0) + requests[r] <= nominal.get((flavor, r), 0) for r in needed):
                    for resource in needed:
                        assignment[resource] = flavor
                    break
            else:
                return None
        if any(requests[r] > 0 and r not in assignment for r in requests):
            return None
        return assignment

    # --- usage ------------------------------------------------------------------------------

    def add(self, queue: str, amounts: Mapping[FlavorResource, int]) -> None:
        node = self._queues[queue]
        for fr, amount in amounts.items():
            if amount:
                _add_usage(node, fr, amount)

    def remove(self, queue: str, amounts: Mapping[FlavorResource, int]) -> None:
        node = self._queues[queue]
        for fr, amount in amounts.items():
            if amount:
                _remove_usage(node, fr, amount)


def flavor_amounts(requests: Mapping[str, int], assignment: Mapping[str, str]) -> dict[FlavorResource, int]:
    """``{(flavor, resource): amount}`` of a workload under ``assignment``."""
    return {(assignment[r], r): amount for r, amount in requests.items() if amount and r in assignment}


def _load_quotas(node: _Node, quotas: Iterable[FlavorQuotas]) -> None:
    for flavor_quotas in quotas:
        for resource, quota in flavor_quotas.resources.items():
            fr = (flavor_quotas.flavor, resource)
            node.nominal[fr] = quota.nominal
            if quota.borrowing_limit is not None:
                node.borrowing[fr] = quota.borrowing_limit
            if quota.lending_limit is not None:
                node.lending[fr] = quota.lending_limit


def _compute_subtree(node: _Node, children: Mapping[_Node, list[_Node]]) -> None:
    subtree = dict(node.nominal)
    for child in children.get(node, ()):
        _compute_subtree(child, children)
        for fr, amount in child.subtree.items():
            lent = amount - child.guaranteed.get(fr, 0)
            subtree[fr] = subtree.get(fr, 0) + lent
    node.subtree = subtree
    node.guaranteed = {fr: max(0, subtree.get(fr, 0) - limit) for fr, limit in node.lending.items()}


def _nominal_total(node: _Node, children: Mapping[_Node, list[_Node]]) -> dict[str, int]:
    total: dict[str, int] = {}
    stack = [node]
    while stack:
        current = stack.pop()
        for (_, resource), amount in current.nominal.items():
            total[resource] = total.get(resource, 0) + amount
        stack.extend(children.get(current, ()))
    return total


def _available(node: _Node, fr: FlavorResource, *, use_usage: bool) -> int:
    path = []
    current: _Node | None = node
    while current is not None:
        path.append(current)
        current = current.parent
    root = path[-1]
    value = root.subtree.get(fr, 0) - (root.usage.get(fr, 0) if use_usage else 0)
    for current in reversed(path[:-1]):
        usage = current.usage.get(fr, 0) if use_usage else 0
        guaranteed = current.guaranteed.get(fr, 0)
        local = max(0, guaranteed - usage)
        limit = current.borrowing.get(fr)
        if limit is not None:
            stored_in_parent = current.subtree.get(fr, 0) - guaranteed
            used_in_parent = max(0, usage - guaranteed)
            value = min(value, stored_in_parent - used_in_parent + limit)
        value = local + value
    return value


def _add_usage(node: _Node, fr: FlavorResource, amount: int) -> None:
    current: _Node | None = node
    while current is not None and amount > 0:
        local = max(0, current.guaranteed.get(fr, 0) - current.usage.get(fr, 0))
        current.usage[fr] = current.usage.get(fr, 0) + amount
        amount -= local
        current = current.parent


def _remove_usage(node: _Node, fr: FlavorResource, amount: int) -> None:
    current: _Node | None = node
    while current is not None and amount > 0:
        stored_in_parent = current.usage.get(fr, 0) - current.guaranteed.get(fr, 0)
        current.usage[fr] = current.usage.get(fr, 0) - amount
        if stored_in_parent <= 0:
            return
        amount = min(amount, stored_in_parent)
        current = current.parent
