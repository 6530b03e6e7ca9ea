"""Scores of the fair tree's nodes, per admission mode (part of the admission pass).

UsageBasedAdmissionFairSharing: ``sum_r w_r (consumed_r + penalty_r) / weight``; a namespace
inside a ClusterQueue scores the sum of its LocalQueues' scores over its own weight.
DominantResourceShare: dominant share of the allocation over the scope's capacity, over the
weight. TimeAware: allocation over fair share (fair shares computed here, see ``time_aware``).

A mixin of the planner's ``_Planner``: it reads the pass state the planner builds (``locals``,
``queues``, ``cohorts``, ``alloc``, ``demand``, ``tree``, ``snapshot``, ``policy``).
"""

from __future__ import annotations

from collections.abc import Mapping

from fairshare.admission.pass_state import (
    CLUSTER_QUEUE,
    COHORT,
    QUEUE_NAMESPACE,
    LocalState,
    PassBase,
    QueueState,
    scope_capacity,
    sum_maps,
)
from fairshare.admission.ranking import borrowing_share, dominant_share, fair_share_ratio, weighted
from fairshare.admission.time_aware import ShareNode, fair_shares
from fairshare.policy import BORROWING_SHARE
from fairshare.quota.scopes import Scope
from fairshare.types import (
    DOMINANT_RESOURCE_SHARE,
    NO_FAIR_SHARING,
    TIME_AWARE,
    USAGE_BASED,
    Namespace,
    UsageState,
    node_id,
)
from fairshare.usage.usage import INFINITE_SCORE, weighted_usage

_EMPTY_STATE = UsageState()


class Scoring(PassBase):
    """Fair-share scores and TimeAware fair shares of one pass."""

    def _time_aware_shares(self) -> None:
        """KAI fair shares for every TimeAware scope, from deserved quota, demand and history."""
        scopes: dict[tuple[str, str], Scope] = {}
        for queue in self.queues.values():
            if queue.mode == TIME_AWARE:
                scopes[(queue.scope.kind, queue.scope.name)] = queue.scope
        if not scopes:
            return
        history = self.snapshot.historical_usage
        children_of: dict[str, list[str]] = {}
        for name, cohort in sorted(self.cohorts.items()):
            if cohort.parent is not None:
                children_of.setdefault(cohort.parent, []).append(name)
        queues_of: dict[str, list[str]] = {}
        for name, queue in self.queues.items():
            if queue.spec.cohort is not None:
                queues_of.setdefault(queue.spec.cohort, []).append(name)
        locals_of: dict[str, dict[str, list[str]]] = {}
        for key, local in sorted(self.locals.items()):
            locals_of.setdefault(local.queue.name, {}).setdefault(local.spec.namespace, []).append(key)

        self._share_layout = (children_of, queues_of, locals_of, history)
        k = self.policy.k_value
        for (kind, name), scope in sorted(scopes.items()):
            root = self._share_cohort(name) if kind == "cohort" else self._share_queue(name)
            self.shares.update(fair_shares(root, scope_capacity(self.tree, scope), k))
            stack = [root]
            while stack:
                share_node = stack.pop()
                self.ta_demand[share_node.node_id] = dict(share_node.demand)
                stack.extend(share_node.children)

    def _share_local(self, key: str) -> ShareNode:
        local = self.locals[key]
        history = self._share_layout[3]
        demand = sum_maps(self.alloc.get(local.nid, {}), self.demand.get(local.nid, {}))
        return ShareNode(local.nid, local.spec.weight, {}, demand, dict(history.get(key, {})))

    def _share_queue(self, name: str) -> ShareNode:
        locals_of = self._share_layout[2]
        children = []
        for namespace, keys in sorted(locals_of.get(name, {}).items()):
            leaves = [self._share_local(key) for key in keys]
            children.append(
                ShareNode(
                    node_id(QUEUE_NAMESPACE, f"{name}/{namespace}"),
                    self.namespaces[namespace].weight,
                    {},
                    sum_maps(*(leaf.demand for leaf in leaves)),
                    sum_maps(*(leaf.usage for leaf in leaves)),
                    leaves,
                )
            )
        return ShareNode(
            node_id(CLUSTER_QUEUE, name),
            self.queues[name].spec.weight,
            self.tree.subtree_nominal("clusterQueue", name),
            sum_maps(*(c.demand for c in children)),
            sum_maps(*(c.usage for c in children)),
            children,
        )

    def _share_cohort(self, name: str) -> ShareNode:
        children_of, queues_of = self._share_layout[0], self._share_layout[1]
        children = [self._share_cohort(c) for c in children_of.get(name, [])]
        children += [self._share_queue(q) for q in sorted(queues_of.get(name, []))]
        weight = self.cohorts[name].weight if name in self.cohorts else 1.0
        return ShareNode(
            node_id(COHORT, name),
            weight,
            self.tree.subtree_nominal("cohort", name),
            sum_maps(*(c.demand for c in children)),
            sum_maps(*(c.usage for c in children)),
            children,
        )

    def _capacity(self, scope: Scope) -> dict[str, int]:
        key = f"{scope.kind}:{scope.name}"
        capacity = self.capacities.get(key)
        if capacity is None:
            capacity = self.capacities[key] = scope_capacity(self.tree, scope)
        return capacity

    def _usage_state(self, nid: str) -> UsageState:
        return self.snapshot.usage.get(nid, _EMPTY_STATE)

    def _initial_scores(self) -> None:
        self.weighted: dict[str, float] = {}
        self.local_scores: dict[str, float] = {}
        self.local_ties: dict[str, float] = {}
        self.ns_members: dict[str, list[str]] = {}
        for queue in self.queues.values():
            queue.capacity = self._capacity(queue.scope) if queue.scope.fair else {}
            parent = queue.spec.cohort
            parent_scope = self.cohort_scopes.get(parent) if parent is not None else None
            queue.scored_in_cohort = parent_scope is not None and parent_scope.fair
        for key, local in self.locals.items():
            self.ns_members.setdefault(local.ns_nid, []).append(key)
            if local.queue.mode == USAGE_BASED:
                self.weighted[local.nid] = weighted_usage(self._usage_state(local.nid), self.policy)
        for key, local in self.locals.items():
            self.local_scores[key], self.local_ties[key] = self._local_score(local)

    def _local_score(self, local: LocalState) -> tuple[float, float]:
        """(score, tie) of a LocalQueue inside its ClusterQueue (see ``ranking.weighted``)."""
        queue = local.queue
        mode = queue.mode
        if mode == USAGE_BASED:
            return weighted(self.weighted[local.nid], local.spec.weight)
        if mode == DOMINANT_RESOURCE_SHARE:
            return weighted(dominant_share(self.alloc.get(local.nid, {}), queue.capacity), local.spec.weight)
        if mode == TIME_AWARE:
            ratio = fair_share_ratio(
                self.alloc.get(local.nid, {}), self.shares.get(local.nid, {}), self.ta_demand.get(local.nid, {})
            )
            return ratio, 0.0
        return 0.0, 0.0

    def _namespace_score(self, ns_nid: str, namespace: Namespace, mode: str) -> tuple[float, float]:
        if mode == TIME_AWARE:
            ratio = fair_share_ratio(
                self.alloc.get(ns_nid, {}), self.shares.get(ns_nid, {}), self.ta_demand.get(ns_nid, {})
            )
            return ratio, 0.0
        if mode == NO_FAIR_SHARING:
            return 0.0, 0.0
        total = 0.0
        ties = 0.0
        for key in self.ns_members.get(ns_nid, ()):
            total += self.local_scores[key]
            ties += self.local_ties[key]
        score, tie = weighted(total, namespace.weight)
        return (score, tie) if tie or total != INFINITE_SCORE else (score, ties)

    def _queue_score(self, queue: QueueState) -> tuple[float, float]:
        return self._group_score(CLUSTER_QUEUE, queue.name, queue.spec.weight, queue.mode, queue.capacity)

    def _cohort_score(self, name: str, mode: str, capacity: Mapping[str, int]) -> tuple[float, float]:
        weight = self.cohorts[name].weight if name in self.cohorts else 1.0
        return self._group_score(COHORT, name, weight, mode, capacity)

    def _group_score(
        self, kind: str, name: str, weight: float, mode: str, capacity: Mapping[str, int]
    ) -> tuple[float, float]:
        """(score, tie) of a ClusterQueue or cohort among its siblings, without any candidate.

        Under ``cohortDominantShare: Borrowing`` the fair tree ranks DominantResourceShare
        siblings by their share with their candidate admitted (``FairTree._key``); this value
        is what pending reasons quote.
        """
        nid = node_id(kind, name)
        if mode == USAGE_BASED:
            value = self.weighted.get(nid)
            if value is None:
                value = self.weighted[nid] = weighted_usage(self._usage_state(nid), self.policy)
            return weighted(value, weight)
        if mode == DOMINANT_RESOURCE_SHARE:
            if self.policy.cohort_dominant_share == BORROWING_SHARE:
                parent, borrowed = self.tree.borrowed_now(kind, name)
                return self._share_of(borrowed, parent, weight) if parent is not None else (0.0, 0.0)
            return weighted(dominant_share(self.alloc.get(nid, {}), capacity), weight)
        if mode == TIME_AWARE:
            ratio = fair_share_ratio(self.alloc.get(nid, {}), self.shares.get(nid, {}), self.ta_demand.get(nid, {}))
            return ratio, 0.0
        return 0.0, 0.0

    def _share_of(self, borrowed: Mapping, parent: str, weight: float) -> tuple[float, float]:
        """``borrowed`` per flavor-resource -> weighted Kueue dominant share against ``parent``'s lendable."""
        by_resource: dict[str, int] = {}
        for (_, resource), amount in borrowed.items():
            by_resource[resource] = by_resource.get(resource, 0) + amount
        lendable = self.lendables.get(parent)
        if lendable is None:
            lendable = self.lendables[parent] = self.tree.lendable(parent)
        share = borrowing_share(by_resource, lendable)
        if share == 0.0:
            return 0.0, 0.0  # not borrowing: no share, whatever the weight (Kueue)
        return weighted(share, weight)
