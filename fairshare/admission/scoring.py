"""Scores of the fair tree's nodes, per admission mode (part of the admission pass).

UsageBasedAdmissionFairSharing: ``sum_r w_r (consumed_r + penalty_r) / weight``; a namespace
inside a ClusterQueue scores the sum of its LocalQueues' scores over its own weight.
DominantResourceShare: dominant share of the allocation over the scope's capacity, over the
weight. TimeAware: allocation over fair share (fair shares computed here, see ``time_aware``).

An object the planner builds over its pass state and calls: it reads that state (``locals``,
``queues``, ``cohorts``, ``alloc``, ``demand``, ``tree``, ``snapshot``, ``policy``) through
``state`` and keeps the scores (``local_scores``, ``local_ties``, ``weighted``). A TimeAware
LocalQueue's tie is computed when first read (``local_ties[key]``; never ``.get``): it reads the
queue's windowed usage, which the simulator computes only when asked.
"""

from __future__ import annotations

from collections.abc import Mapping

from fairshare.admission.pass_state import (
    CLUSTER_QUEUE,
    COHORT,
    LocalState,
    PassState,
    QueueState,
    scope_capacity,
    sum_maps,
)
from fairshare.admission.ranking import borrowing_share, dominant_share, fair_share_ratio, weighted
from fairshare.admission.time_aware import ShareNode, fair_shares
from fairshare.policy import BORROWING_SHARE
from fairshare.quota.quota import QuotaTree
from fairshare.quota.scopes import Scope
from fairshare.types import (
    DOMINANT_RESOURCE_SHARE,
    NO_FAIR_SHARING,
    TIME_AWARE,
    USAGE_BASED,
    Namespace,
    UsageState,
    frozen_map,
    node_id,
)
from fairshare.usage.usage import INFINITE_SCORE, weighted_usage

_EMPTY_STATE = UsageState()
_NO_AMOUNTS: Mapping[str, float] = frozen_map(None)
# a namespace's LocalQueues' allocation and pending demand, in turn, in member order
_Inputs = tuple[Mapping[str, int] | None, ...]


class _Ties(dict[str, float]):
    """``Scoring.local_ties``: a TimeAware LocalQueue's tie (``history_tie``) is computed on
    first ``[key]`` read and kept. It holds the pass's LocalQueues and history, not the
    ``Scoring`` (no reference cycle: runs pause the collector)."""

    def __init__(self, locals_: Mapping[str, LocalState], history: Mapping[str, Mapping[str, float]]) -> None:
        super().__init__()
        self._locals = locals_
        self._history = history

    def __missing__(self, key: str) -> float:
        value = self[key] = history_tie(self._history, (key,), self._locals[key].spec.weight)
        return value


class ShareLayout:
    """The shape of a pass's TimeAware fair-share trees, read from its pass state: the
    TimeAware scopes (sorted) with their capacity, each cohort's child cohorts and
    ClusterQueues, each ClusterQueue's namespaces ``(namespace node, weight, [(LocalQueue,
    its node, weight)])`` in name order, the LocalQueues' node ids, and the nominal quota each
    ClusterQueue and cohort deserves (read on first use). Valid while the cohorts, queues,
    namespaces, LocalQueues and quotas it was read from are (``Scoring.time_aware_shares``).

    It also keeps, per namespace, the last share node built for it with what it was built from
    (``built``: the history mapping, whether its usage could be read, each LocalQueue's
    allocation and pending demand, copied): a later call on the same inputs gets the same node
    (share nodes are never changed once built), so only the namespaces whose work changed since
    the last call, or all of them after the history changed, are built again."""

    __slots__ = ("built", "children_of", "deserved", "idle", "local_nids", "namespaces_of", "queues_of", "scopes")

    def __init__(self, state: PassState) -> None:
        scopes: dict[tuple[str, str], Scope] = {}
        for queue in state.queues.values():
            if queue.mode == TIME_AWARE:
                scopes[(queue.scope.kind, queue.scope.name)] = queue.scope
        self.scopes = [
            (kind, name, scope_capacity(state.tree, scope)) for (kind, name), scope in sorted(scopes.items())
        ]
        self.children_of: dict[str, list[str]] = {}
        self.queues_of: dict[str, list[str]] = {}
        self.namespaces_of: dict[str, list[tuple[str, float, list[tuple[str, str, float]]]]] = {}
        self.deserved: dict[tuple[str, str], dict[str, int]] = {}
        self.idle: dict[str, ShareNode] = {}
        self.built: dict[str, tuple[Mapping[str, Mapping[str, float]], bool, _Inputs, ShareNode]] = {}
        self.local_nids: frozenset[str] = frozenset()
        if not self.scopes:
            return
        self.local_nids = frozenset(local.nid for local in state.locals.values())
        for name, cohort in sorted(state.cohorts.items()):
            if cohort.parent is not None:
                self.children_of.setdefault(cohort.parent, []).append(name)
        queues_of: dict[str, list[str]] = {}
        for name, queue in state.queues.items():
            if queue.spec.cohort is not None:
                queues_of.setdefault(queue.spec.cohort, []).append(name)
        self.queues_of = {cohort: sorted(names) for cohort, names in queues_of.items()}
        locals_of: dict[str, dict[str, list[str]]] = {}
        for key, local in sorted(state.locals.items()):
            locals_of.setdefault(local.queue.name, {}).setdefault(local.spec.namespace, []).append(key)
        for queue_name, by_namespace in locals_of.items():
            entries = self.namespaces_of[queue_name] = []
            for namespace, keys in sorted(by_namespace.items()):
                members = [(key, state.locals[key].nid, state.locals[key].spec.weight) for key in keys]
                entries.append((state.locals[keys[0]].ns_nid, state.namespaces[namespace].weight, members))

    def idle_namespace(self, ns_nid: str, weight: float, members: list[tuple[str, str, float]]) -> ShareNode:
        """The share node of a namespace whose LocalQueues have nothing allocated nor asked,
        its usage unread: no demand, no usage, the same every time (kept; never changed)."""
        found = self.idle.get(ns_nid)
        if found is None:
            leaves = [ShareNode(nid, leaf_weight, _NO_AMOUNTS, {}, _NO_AMOUNTS, []) for _, nid, leaf_weight in members]
            found = self.idle[ns_nid] = ShareNode(ns_nid, weight, {}, {}, {}, leaves)
        return found

    def nominal(self, tree: QuotaTree, kind: str, name: str) -> dict[str, int]:
        """``tree.subtree_nominal(kind, name)``, kept."""
        found = self.deserved.get((kind, name))
        if found is None:
            found = self.deserved[(kind, name)] = tree.subtree_nominal(kind, name)
        return found


class Scoring:
    """Fair-share scores and TimeAware fair shares of one pass."""

    def __init__(self, state: PassState) -> None:
        self.state = state
        self.weighted: dict[str, float] = {}
        self.local_scores: dict[str, float] = {}
        self.local_ties: dict[str, float] = {}
        self.ns_members: dict[str, list[str]] = {}

    def time_aware_shares(self, with_demand: bool = True, layout: ShareLayout | None = None) -> ShareLayout | None:
        """KAI fair shares for every TimeAware scope, from deserved quota, demand and history
        (``state.shares``), and each node's demand (``state.ta_demand``) unless ``with_demand``
        is false (the simulator's series read the LocalQueues' shares alone: only theirs are
        kept then). ``layout``: the trees' shape from an earlier call on the same cohorts,
        queues, namespaces and LocalQueues (the simulator keeps one per run); the one used is
        returned (None when no scope is TimeAware)."""
        if layout is None:
            layout = ShareLayout(self.state)
        if not layout.scopes:
            return None
        self._layout = layout
        self._history = self.state.snapshot.historical_usage
        k = self.state.policy.k_value
        read = None if with_demand else layout.local_nids
        for kind, name, capacity in layout.scopes:
            root = self._share_cohort(name) if kind == "cohort" else self._share_queue(name, usage_read=False)
            self.state.shares.update(fair_shares(root, capacity, k, read))
            if not with_demand:
                continue
            ta_demand = self.state.ta_demand
            stack = [root]
            while stack:
                share_node = stack.pop()
                ta_demand[share_node.node_id] = share_node.demand  # share nodes are never changed
                stack.extend(share_node.children)
        return layout

    def _share_queue(self, name: str, usage_read: bool = True) -> ShareNode:
        """The ClusterQueue's share node. ``usage_read``: whether its parent's ``divide`` may
        read its usage (not when it is the root). A node's usage is read only while it asks for
        more (demand above what it was given), so the history of a namespace's LocalQueues is
        looked up only when it or the ClusterQueue's usage can be read: the numbers of every
        node that is read are the same, and an idle queue's windowed usage is never asked for."""
        layout, history = self._layout, self._history
        alloc, pending = self.state.alloc, self.state.demand
        built_of = layout.built
        children = []
        active = []  # the children built here (an idle one adds nothing to the sums below)
        for ns_nid, ns_weight, members in layout.namespaces_of.get(name, ()):
            # its LocalQueues' allocation and pending demand, in member order
            if len(members) == 1:
                nid = members[0][1]
                inputs: tuple[Mapping[str, int] | None, ...] = (alloc.get(nid), pending.get(nid))
            else:
                inputs = tuple([value for _, nid, _ in members for value in (alloc.get(nid), pending.get(nid))])
            if not usage_read and not any(inputs):
                # an idle namespace: no demand, usage not read (the same nodes every time)
                children.append(layout.idle.get(ns_nid) or layout.idle_namespace(ns_nid, ns_weight, members))
                continue
            built = built_of.get(ns_nid)
            if built is not None and built[0] is history and built[1] is usage_read and built[2] == inputs:
                node = built[3]  # the same inputs as when it was built: the same node
            else:
                node = self._share_namespace(ns_nid, ns_weight, members, usage_read)
                # the inputs copied: a pass goes on changing its allocation after the shares
                built_of[ns_nid] = (history, usage_read, tuple([None if v is None else dict(v) for v in inputs]), node)
            children.append(node)
            active.append(node)
        return ShareNode(
            node_id(CLUSTER_QUEUE, name),
            self.state.queues[name].spec.weight,
            layout.nominal(self.state.tree, CLUSTER_QUEUE, name),
            sum_maps(*(c.demand for c in active)),
            sum_maps(*(c.usage for c in active)),
            children,
        )

    def _share_namespace(
        self, ns_nid: str, ns_weight: float, members: list[tuple[str, str, float]], usage_read: bool
    ) -> ShareNode:
        """The share node of one namespace of a ClusterQueue and its LocalQueues' leaves
        (``_share_queue``)."""
        history = self._history
        alloc, pending = self.state.alloc, self.state.demand
        leaves = []
        for _, nid, weight in members:
            allocated, asked = alloc.get(nid), pending.get(nid)
            if allocated or asked:
                demand = sum_maps(allocated or _NO_AMOUNTS, asked or _NO_AMOUNTS)
            else:
                demand = {}  # sum_maps of nothing
            leaves.append(ShareNode(nid, weight, _NO_AMOUNTS, demand, _NO_AMOUNTS, []))
        if len(leaves) == 1:  # the same as below, without the generators
            only = leaves[0]
            demand = sum_maps(only.demand)
            if usage_read or any(demand.values()):
                only.usage = dict(history.get(members[0][0], _NO_AMOUNTS))
            return ShareNode(ns_nid, ns_weight, {}, demand, sum_maps(only.usage), leaves)
        demand = sum_maps(*(leaf.demand for leaf in leaves))
        if usage_read or any(demand.values()):
            for (key, _, _), leaf in zip(members, leaves, strict=True):
                leaf.usage = dict(history.get(key, _NO_AMOUNTS))
        return ShareNode(ns_nid, ns_weight, {}, demand, sum_maps(*(leaf.usage for leaf in leaves)), leaves)

    def _share_cohort(self, name: str) -> ShareNode:
        layout = self._layout
        children = [self._share_cohort(c) for c in layout.children_of.get(name, [])]
        children += [self._share_queue(q) for q in layout.queues_of.get(name, [])]
        weight = self.state.cohorts[name].weight if name in self.state.cohorts else 1.0
        return ShareNode(
            node_id(COHORT, name),
            weight,
            layout.nominal(self.state.tree, COHORT, name),
            sum_maps(*(c.demand for c in children)),
            sum_maps(*(c.usage for c in children)),
            children,
        )

    def capacity(self, scope: Scope) -> dict[str, int]:
        key = f"{scope.kind}:{scope.name}"
        capacity = self.state.capacities.get(key)
        if capacity is None:
            capacity = self.state.capacities[key] = scope_capacity(self.state.tree, scope)
        return capacity

    def usage_state(self, nid: str) -> UsageState:
        return self.state.snapshot.usage.get(nid, _EMPTY_STATE)

    def initial_scores(self) -> None:
        self.weighted = {}
        self.local_scores = {}
        self.local_ties = {}
        self.ns_members = {}
        for queue in self.state.queues.values():
            queue.capacity = self.capacity(queue.scope) if queue.scope.fair else {}
            parent = queue.spec.cohort
            parent_scope = self.state.cohort_scopes.get(parent) if parent is not None else None
            queue.scored_in_cohort = parent_scope is not None and parent_scope.fair
        for key, local in self.state.locals.items():
            self.ns_members.setdefault(local.ns_nid, []).append(key)
            if local.queue.mode == USAGE_BASED:
                self.weighted[local.nid] = weighted_usage(self.usage_state(local.nid), self.state.policy)
        self.local_ties = _Ties(self.state.locals, self.state.snapshot.historical_usage)
        for key, local in self.state.locals.items():
            if local.queue.mode == TIME_AWARE:
                self.local_scores[key] = self._time_aware_ratio(local)  # its tie on first read
            else:
                self.local_scores[key], self.local_ties[key] = self.local_score(local)

    def _time_aware_ratio(self, local: LocalState) -> float:
        return fair_share_ratio(
            self.state.alloc.get(local.nid, {}),
            self.state.shares.get(local.nid, {}),
            self.state.ta_demand.get(local.nid, {}),
        )

    def local_score(self, local: LocalState) -> tuple[float, float]:
        """(score, tie) of a LocalQueue inside its ClusterQueue (see ``ranking.weighted``)."""
        queue = local.queue
        mode = queue.mode
        if mode == USAGE_BASED:
            return weighted(self.weighted[local.nid], local.spec.weight)
        if mode == DOMINANT_RESOURCE_SHARE:
            return weighted(dominant_share(self.state.alloc.get(local.nid, {}), queue.capacity), local.spec.weight)
        if mode == TIME_AWARE:
            return self._time_aware_ratio(local), self.history_tie((local.spec.key,), local.spec.weight)
        return 0.0, 0.0

    def history_tie(self, keys: tuple[str, ...] | list[str], weight: float) -> float:
        """``history_tie`` on this pass's history."""
        return history_tie(self.state.snapshot.historical_usage, keys, weight)

    def namespace_score(self, ns_nid: str, namespace: Namespace, mode: str) -> tuple[float, float]:
        if mode == TIME_AWARE:
            ratio = fair_share_ratio(
                self.state.alloc.get(ns_nid, {}),
                self.state.shares.get(ns_nid, {}),
                self.state.ta_demand.get(ns_nid, {}),
            )
            return ratio, self.history_tie(self.ns_members.get(ns_nid, []), namespace.weight)
        if mode == NO_FAIR_SHARING:
            return 0.0, 0.0
        total = 0.0
        ties = 0.0
        for key in self.ns_members.get(ns_nid, ()):
            total += self.local_scores[key]
            ties += self.local_ties[key]
        score, tie = weighted(total, namespace.weight)
        return (score, tie) if tie or total != INFINITE_SCORE else (score, ties)

    def queue_score(self, queue: QueueState) -> tuple[float, float]:
        return self._group_score(CLUSTER_QUEUE, queue.name, queue.spec.weight, queue.mode, queue.capacity)

    def cohort_score(self, name: str, mode: str, capacity: Mapping[str, int]) -> tuple[float, float]:
        weight = self.state.cohorts[name].weight if name in self.state.cohorts else 1.0
        return self._group_score(COHORT, name, weight, mode, capacity)

    def _group_score(
        self, kind: str, name: str, weight: float, mode: str, capacity: Mapping[str, int]
    ) -> tuple[float, float]:
        """(score, tie) of a ClusterQueue or cohort among its siblings, without any candidate.

        Under ``cohortDominantShare: Borrowing`` the fair tree ranks DominantResourceShare
        siblings by their share with their candidate admitted (``FairTree.key``); this value
        is what pending reasons quote.
        """
        nid = node_id(kind, name)
        if mode == USAGE_BASED:
            value = self.weighted.get(nid)
            if value is None:
                value = self.weighted[nid] = weighted_usage(self.usage_state(nid), self.state.policy)
            return weighted(value, weight)
        if mode == DOMINANT_RESOURCE_SHARE:
            if self.state.policy.cohort_dominant_share == BORROWING_SHARE:
                parent, borrowed = self.state.tree.borrowed_now(kind, name)
                return self.share_of(borrowed, parent, weight) if parent is not None else (0.0, 0.0)
            return weighted(dominant_share(self.state.alloc.get(nid, {}), capacity), weight)
        if mode == TIME_AWARE:
            ratio = fair_share_ratio(
                self.state.alloc.get(nid, {}), self.state.shares.get(nid, {}), self.state.ta_demand.get(nid, {})
            )
            return ratio, 0.0
        return 0.0, 0.0

    def share_of(self, borrowed: Mapping, parent: str, weight: float) -> tuple[float, float]:
        """``borrowed`` per flavor-resource -> weighted Kueue dominant share against ``parent``'s lendable."""
        by_resource: dict[str, int] = {}
        for (_, resource), amount in borrowed.items():
            by_resource[resource] = by_resource.get(resource, 0) + amount
        lendable = self.state.lendables.get(parent)
        if lendable is None:
            lendable = self.state.lendables[parent] = self.state.tree.lendable(parent)
        share = borrowing_share(by_resource, lendable)
        if share == 0.0:
            return 0.0, 0.0  # not borrowing: no share, whatever the weight (Kueue)
        return weighted(share, weight)


def history_tie(history: Mapping[str, Mapping[str, float]], keys: tuple[str, ...] | list[str], weight: float) -> float:
    """TimeAware's tie-break between nodes at the same ``allocated / fair share``: their
    windowed usage (dominant over resources, summed over ``keys``' LocalQueues) over their
    weight, so the one that used less over the window goes first. Without it every idle
    queue scores 0 and idle queues are served by queue timestamp (FIFO), whatever their
    history: the usage window would then never reach the order in a busy cluster, where
    the queues that compete for freed room are exactly those with nothing running."""
    total: dict[str, float] = {}
    for key in keys:
        for resource, value in history.get(key, {}).items():
            total[resource] = total.get(resource, 0.0) + value
    used = max(total.values(), default=0.0)
    return used / weight if weight > 0 else (INFINITE_SCORE if used > 0 else 0.0)
