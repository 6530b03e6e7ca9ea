"""The admission planner: one pass over a snapshot, ``plan(snapshot, now) -> Plan``.

How a pass runs:

1. Admitted workloads whose queue is drained (``HoldAndDrain`` stop policy, or a hold with
   ``drain``) are evicted first, so their quota is free for the rest of the pass.
2. Pending workloads sit in a fair tree: root -> cohorts -> ClusterQueues -> namespaces ->
   LocalQueues -> workloads (priority, then queue timestamp, then name). Every node picks the
   child with the lowest key ``(group, score, best candidate's order)``; ``score`` counts only
   where the node is inside a fair admission scope (see ``scopes``), ``group`` is 0 for a
   candidate that fits its ClusterQueue's nominal quota under a usage-based or dominant-share
   cohort scope (admitted directly) and 1 for one that must borrow.
3. The best candidate is tried: holds and stop policies, then the namespace quota, then flavor
   assignment against the quota tree, then (if its ClusterQueue opted in) preemption. After
   every single admission the scores on its path change (entry penalty, new allocation) and the
   tree re-ranks; each step costs O(depth x log(children)) with lazy heaps.
4. ``StrictFIFO``: a head that cannot be admitted blocks its ClusterQueue for the rest of the
   pass. ``BestEffortFIFO``: it stays pending and the next candidate is tried.

Two rules keep a pass linear in the number of candidates. Once a request shape (a *class*:
requests, plus priority / timestamp / LocalQueue where preemption depends on them) fails a
ClusterQueue's quota, later candidates of the same class in that queue fail too without a
second check (without preemption, quota only shrinks during a pass, so this changes nothing);
and once every class of a ClusterQueue has failed, the queue is done: its remaining candidates
get their reasons without further checks (or are skipped when ``reasons=False``).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping
from typing import Any

from queues.engine import reasons as text
from queues.engine.errors import ValidationError
from queues.engine.fairshare import ShareNode, fair_shares
from queues.engine.policy import FairSharingPolicy
from queues.engine.preemption import Running, find_victims
from queues.engine.quota import FitFailure, QuotaTree, flavor_amounts
from queues.engine.scopes import Scope, cohort_chains, cohort_scope, queue_chain, queue_scope
from queues.engine.types import (
    BLOCKED_BY_STRICT_FIFO_HEAD,
    DOMINANT_RESOURCE_SHARE,
    INSUFFICIENT_QUOTA,
    NAMESPACE_QUOTA_EXCEEDED,
    NO_FAIR_SHARING,
    PREEMPT_ANY,
    PREEMPT_LOWER_OR_NEWER_EQUAL,
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_NEVER,
    PREEMPTED,
    QUEUE_STOPPED,
    STOP_HOLD_AND_DRAIN,
    STOP_NONE,
    STRICT_FIFO,
    TIME_AWARE,
    USAGE_BASED,
    WAITING_FOR_FAIR_SHARE,
    Admission,
    ClusterQueue,
    Cohort,
    Eviction,
    LocalQueue,
    Namespace,
    PendingReason,
    Plan,
    Snapshot,
    UsageState,
    Workload,
    frozen_map,
    node_id,
)
from queues.engine.usage import INFINITE_SCORE, entry_penalty, score_of, weighted_usage

_LQ, _NS, _CQ, _COHORT, _ROOT = "localQueue", "clusterQueueNamespace", "clusterQueue", "cohort", "root"
_DIRECT_MODES = (USAGE_BASED, DOMINANT_RESOURCE_SHARE)
_EMPTY_STATE = UsageState()


def plan(snapshot: Snapshot, now: float, *, reasons: bool = True, entry_penalty: bool = True) -> Plan:
    """Run one admission pass over ``snapshot`` at time ``now``.

    ``reasons=False`` skips pending reasons (the simulator's inner passes, which only need the
    admissions and evictions; the decisions are the same). ``entry_penalty=False`` turns the
    KEP-4136 entry penalty off, only to show what it prevents.
    """
    return _Planner(snapshot, now, reasons, entry_penalty).run()


def scope_capacities(snapshot: Snapshot) -> dict[str, dict[str, int]]:
    """Per LocalQueue key, the capacity (millis per resource) its admission scope shares out.

    TimeAware's historical usage of a LocalQueue is normalised by this capacity.
    """
    cohorts = {c.name: c for c in snapshot.cohorts}
    chains = cohort_chains(cohorts)
    tree = QuotaTree(snapshot.cohorts, snapshot.cluster_queues)
    queues = {q.name: q for q in snapshot.cluster_queues}
    by_queue: dict[str, dict[str, int]] = {}
    result: dict[str, dict[str, int]] = {}
    for lq in snapshot.local_queues:
        queue = queues.get(lq.cluster_queue)
        if queue is None:
            continue
        if queue.name not in by_queue:
            by_queue[queue.name] = _scope_capacity(tree, queue_scope(queue, cohorts, chains))
        result[lq.key] = dict(by_queue[queue.name])
    return result


def _scope_capacity(tree: QuotaTree, scope: Scope) -> dict[str, int]:
    if scope.kind == "cohort":
        return tree.subtree_nominal("cohort", scope.name)
    return tree.queue_reach(scope.name)


class _Node:
    """A node of the fair tree (LocalQueue leaves hold the sorted candidates)."""

    __slots__ = (
        "kind", "name", "nid", "parent", "heap", "version", "seq", "key", "score", "use_score",
        "direct", "propagate", "parked", "items", "idx", "cq", "lq", "children_ids",
    )

    def __init__(self, kind: str, name: str, nid: str, seq: int) -> None:
        self.kind = kind
        self.name = name
        self.nid = nid
        self.parent: _Node | None = None
        self.heap: list = []
        self.version = 0
        self.seq = seq
        self.key: tuple | None = None
        self.score = 0.0
        self.use_score = False
        self.direct = False  # ClusterQueue under a usage-based/dominant-share cohort scope
        self.propagate = False  # cohort strictly inside such a scope: passes its best group up
        self.parked = False
        self.items: list = []
        self.idx = 0
        self.cq: _Queue | None = None
        self.lq: _Local | None = None


class _Queue:
    """Per-ClusterQueue pass state."""

    __slots__ = (
        "spec", "name", "scope", "mode", "unit", "strict", "node", "path", "failed", "counts", "live",
        "position", "blocked", "recent", "class_flags", "scored_in_cohort", "capacity",
    )

    def __init__(self, spec: ClusterQueue, scope: Scope, unit: str, path: tuple[str, ...]) -> None:
        self.spec = spec
        self.name = spec.name
        self.scope = scope
        self.mode = scope.mode
        self.unit = unit
        self.strict = spec.queueing_strategy == STRICT_FIFO
        self.node: _Node | None = None
        self.path = path  # node ids: the queue, then its cohorts up to the root
        self.failed: dict[Any, tuple[FitFailure, bool]] = {}
        self.counts: dict[Any, int] = {}
        self.live = 0
        self.position = 0
        self.blocked: str | None = None
        self.recent: dict[str, float] = {}  # LocalQueues admitted this pass -> score when chosen
        preemption = spec.preemption
        self.class_flags = (
            preemption.enabled,
            preemption.within_cluster_queue == PREEMPT_LOWER_OR_NEWER_EQUAL,
            preemption.enabled and scope.mode == TIME_AWARE,
        )
        self.scored_in_cohort = False
        self.capacity: dict[str, int] = {}


class _Local:
    """Per-LocalQueue pass state."""

    __slots__ = ("spec", "queue", "namespace", "path", "block", "drain", "nid", "ns_nid")

    def __init__(self, spec: LocalQueue, queue: _Queue, namespace: Namespace) -> None:
        self.spec = spec
        self.queue = queue
        self.namespace = namespace
        self.nid = node_id(_LQ, spec.key)
        self.ns_nid = node_id(_NS, f"{queue.name}/{spec.namespace}")
        self.path = (self.nid, self.ns_nid, *queue.path)
        self.block: tuple[str, str] | None = None
        self.drain: tuple[str, str] | None = None


class _Planner:
    def __init__(self, snapshot: Snapshot, now: float, reasons: bool, use_penalty: bool) -> None:
        self.snapshot = snapshot
        self.now = now
        self.reasons = reasons
        self.policy: FairSharingPolicy = snapshot.policy
        self.use_penalty = use_penalty
        self.admissions: list[Admission] = []
        self.evictions: list[Eviction] = []
        self.pending: list[PendingReason] = []
        self._seq = 0
        self._index()
        self.tree = QuotaTree(snapshot.cohorts, snapshot.cluster_queues)
        self._blocks()
        self._load_admitted()
        self.initial: QuotaTree | None = None
        if reasons:
            self.initial = QuotaTree(snapshot.cohorts, snapshot.cluster_queues)
            for running in self.running.values():
                for item in running.values():
                    self.initial.add(item.cluster_queue, item.amounts)
        self._group_pending()
        self.shares: dict[str, dict[str, int]] = {}
        self.ta_demand: dict[str, dict[str, float]] = {}
        self.unit_recent: dict[str, dict[str, float]] = {}
        self._time_aware_shares()
        self._initial_scores()
        self._build_tree()

    # --- indexing ---------------------------------------------------------------------------

    def _index(self) -> None:
        s = self.snapshot
        self.cohorts: dict[str, Cohort] = {c.name: c for c in s.cohorts}
        self.chains = cohort_chains(self.cohorts)
        self.namespaces: dict[str, Namespace] = {n.name: n for n in s.namespaces}
        self.queues: dict[str, _Queue] = {}
        self.unit_queues: dict[str, list[str]] = {}
        for spec in s.cluster_queues:
            chain = queue_chain(spec, self.chains)
            unit = node_id(_COHORT, chain[-1]) if chain else node_id(_CQ, spec.name)
            path = (node_id(_CQ, spec.name), *(node_id(_COHORT, c) for c in chain))
            queue = _Queue(spec, queue_scope(spec, self.cohorts, self.chains), unit, path)
            self.queues[spec.name] = queue
            self.unit_queues.setdefault(unit, []).append(spec.name)
        self.locals: dict[str, _Local] = {}
        for spec in s.local_queues:
            queue = self.queues.get(spec.cluster_queue)
            if queue is None:
                raise ValidationError(f"localQueues.{spec.key}.clusterQueue", f"unknown ClusterQueue {spec.cluster_queue!r}")
            namespace = self.namespaces.get(spec.namespace) or Namespace(spec.namespace)
            self.namespaces.setdefault(spec.namespace, namespace)
            self.locals[spec.key] = _Local(spec, queue, namespace)
        # The mode each node's score is computed with (the scope its parent sits in).
        self.cohort_scopes: dict[str, Scope | None] = {
            name: cohort_scope(name, self.cohorts, self.chains) for name in self.cohorts
        }
        self.capacities: dict[str, dict[str, int]] = {}

    def _blocks(self) -> None:
        """Stop policies and holds, per LocalQueue: the first reason blocks, any drain drains."""
        holds_by_target: dict[tuple[str, str], list] = {}
        for hold in self.snapshot.holds:
            holds_by_target.setdefault((hold.target_kind, hold.target), []).append(hold)
        for local in self.locals.values():
            spec, queue = local.spec, local.queue.spec
            found: list[tuple[str, str, bool]] = []
            if queue.stop_policy != STOP_NONE:
                found.append((QUEUE_STOPPED, text.queue_stopped("ClusterQueue", queue.name, queue.stop_policy),
                              queue.stop_policy == STOP_HOLD_AND_DRAIN))
            if spec.stop_policy != STOP_NONE:
                found.append((QUEUE_STOPPED, text.queue_stopped("LocalQueue", spec.key, spec.stop_policy),
                              spec.stop_policy == STOP_HOLD_AND_DRAIN))
            for kind, target in (("localQueue", spec.key), ("namespace", spec.namespace), ("clusterQueue", queue.name)):
                for hold in holds_by_target.get((kind, target), ()):
                    found.append((hold.code, text.budget_held(kind, target, hold.message), hold.drain))
            if found:
                local.block = (found[0][0], found[0][1])
                drains = [(code, message) for code, message, drain in found if drain]
                local.drain = drains[0] if drains else None

    # --- admitted workloads -----------------------------------------------------------------

    def _load_admitted(self) -> None:
        self.ns_used: dict[str, dict[str, int]] = {}
        self.alloc: dict[str, dict[str, int]] = {}
        self.running: dict[str, dict[str, Running]] = {name: {} for name in self.queues}
        for workload in self.snapshot.workloads:
            if not workload.admitted:
                continue
            local = self._local_of(workload)
            queue_name = workload.cluster_queue or local.queue.name
            if queue_name not in self.queues:
                raise ValidationError(f"workloads.{workload.key}.clusterQueue", f"unknown ClusterQueue {queue_name!r}")
            if local.drain is not None:
                code, message = local.drain
                self.evictions.append(Eviction(workload.key, local.spec.key, queue_name, code, message))
                continue
            amounts = flavor_amounts(workload.requests, workload.assignment)
            item = Running(workload, local.spec.key, local.spec.namespace, queue_name, amounts,
                           workload.admitted_at if workload.admitted_at is not None else -math.inf)
            self.running[queue_name][workload.key] = item
            self._take(item, local.path if queue_name == local.queue.name else self._path_in(local, queue_name))

    def _path_in(self, local: _Local, queue_name: str) -> tuple[str, ...]:
        queue = self.queues[queue_name]
        return (local.nid, node_id(_NS, f"{queue_name}/{local.spec.namespace}"), *queue.path)

    def _take(self, item: Running, path: tuple[str, ...]) -> None:
        """Count a running workload's usage (quota tree, namespace, allocation on its path)."""
        self.tree.add(item.cluster_queue, item.amounts)
        _add(self.ns_used.setdefault(item.namespace, {}), item.workload.requests, 1)
        for nid in path:
            _add(self.alloc.setdefault(nid, {}), item.workload.requests, 1)

    def _release(self, item: Running, path: tuple[str, ...]) -> None:
        self.tree.remove(item.cluster_queue, item.amounts)
        _add(self.ns_used.setdefault(item.namespace, {}), item.workload.requests, -1)
        for nid in path:
            _add(self.alloc.setdefault(nid, {}), item.workload.requests, -1)

    def _local_of(self, workload: Workload) -> _Local:
        local = self.locals.get(workload.local_queue)
        if local is None:
            raise ValidationError(f"workloads.{workload.key}.localQueue", f"unknown LocalQueue {workload.local_queue!r}")
        return local

    # --- pending workloads ------------------------------------------------------------------

    def _group_pending(self) -> None:
        self.by_local: dict[str, list] = {}
        self.demand: dict[str, dict[str, int]] = {}
        shapes: dict[int, tuple] = {}
        reasons = self.reasons
        for workload in self.snapshot.workloads:
            if workload.admitted:
                continue
            local = self._local_of(workload)
            if local.block is not None and not reasons:
                continue
            requests = workload.requests
            shape = shapes.get(id(requests))
            if shape is None:
                shape = shapes[id(requests)] = tuple(sorted((r, a) for r, a in requests.items() if a))
            cls = None
            if local.block is None:
                preempts, by_time, by_queue = local.queue.class_flags
                cls = (shape, workload.priority if preempts else None, workload.queued_at if by_time else None,
                       local.spec.key if by_queue else None)
                demand = self.demand.setdefault(local.nid, {})
                for resource, amount in shape:
                    demand[resource] = demand.get(resource, 0) + amount
            self.by_local.setdefault(local.spec.key, []).append(((-workload.priority, workload.queued_at, workload.key), workload, cls))
        for key, items in self.by_local.items():
            items.sort(key=_first)
            counts = self.locals[key].queue.counts
            for _, _, cls in items:
                if cls is not None:
                    counts[cls] = counts.get(cls, 0) + 1
        for queue in self.queues.values():
            queue.live = len(queue.counts)

    # --- scores -----------------------------------------------------------------------------

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

        def local_node(key: str) -> ShareNode:
            local = self.locals[key]
            demand = _sum_maps(self.alloc.get(local.nid, {}), self.demand.get(local.nid, {}))
            return ShareNode(local.nid, local.spec.weight, {}, demand, dict(history.get(key, {})))

        def queue_node(name: str) -> ShareNode:
            children = []
            for namespace, keys in sorted(locals_of.get(name, {}).items()):
                leaves = [local_node(key) for key in keys]
                children.append(ShareNode(node_id(_NS, f"{name}/{namespace}"), self.namespaces[namespace].weight, {},
                                          _sum_maps(*(leaf.demand for leaf in leaves)),
                                          _sum_maps(*(leaf.usage for leaf in leaves)), leaves))
            return ShareNode(node_id(_CQ, name), self.queues[name].spec.weight, self.tree.subtree_nominal("clusterQueue", name),
                             _sum_maps(*(c.demand for c in children)), _sum_maps(*(c.usage for c in children)), children)

        def cohort_node(name: str) -> ShareNode:
            children = [cohort_node(c) for c in children_of.get(name, [])]
            children += [queue_node(q) for q in sorted(queues_of.get(name, []))]
            weight = self.cohorts[name].weight if name in self.cohorts else 1.0
            return ShareNode(node_id(_COHORT, name), weight, self.tree.subtree_nominal("cohort", name),
                             _sum_maps(*(c.demand for c in children)), _sum_maps(*(c.usage for c in children)), children)

        k = self.policy.k_value
        for (kind, name), scope in sorted(scopes.items()):
            root = cohort_node(name) if kind == "cohort" else queue_node(name)
            self.shares.update(fair_shares(root, _scope_capacity(self.tree, scope), k))
            stack = [root]
            while stack:
                share_node = stack.pop()
                self.ta_demand[share_node.node_id] = dict(share_node.demand)
                stack.extend(share_node.children)

    def _capacity(self, scope: Scope) -> dict[str, int]:
        key = f"{scope.kind}:{scope.name}"
        capacity = self.capacities.get(key)
        if capacity is None:
            capacity = self.capacities[key] = _scope_capacity(self.tree, scope)
        return capacity

    def _usage_state(self, nid: str) -> UsageState:
        return self.snapshot.usage.get(nid, _EMPTY_STATE)

    def _initial_scores(self) -> None:
        self.weighted: dict[str, float] = {}
        self.local_scores: dict[str, float] = {}
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
            self.local_scores[key] = self._local_score(local)

    def _local_score(self, local: _Local) -> float:
        queue = local.queue
        mode = queue.mode
        if mode == USAGE_BASED:
            return score_of(self.weighted[local.nid], local.spec.weight)
        if mode == DOMINANT_RESOURCE_SHARE:
            return score_of(_dominant(self.alloc.get(local.nid, {}), queue.capacity), local.spec.weight)
        if mode == TIME_AWARE:
            return _ratio(self.alloc.get(local.nid, {}), self.shares.get(local.nid, {}), self.ta_demand.get(local.nid, {}))
        return 0.0

    def _namespace_score(self, ns_nid: str, namespace: Namespace, mode: str) -> float:
        if mode == TIME_AWARE:
            return _ratio(self.alloc.get(ns_nid, {}), self.shares.get(ns_nid, {}), self.ta_demand.get(ns_nid, {}))
        if mode == NO_FAIR_SHARING:
            return 0.0
        total = 0.0
        for key in self.ns_members.get(ns_nid, ()):
            total += self.local_scores[key]
        return score_of(total, namespace.weight)

    def _queue_score(self, queue: _Queue) -> float:
        return self._group_score(node_id(_CQ, queue.name), queue.spec.weight, queue.mode, queue.capacity)

    def _cohort_score(self, name: str, mode: str, capacity: Mapping[str, int]) -> float:
        weight = self.cohorts[name].weight if name in self.cohorts else 1.0
        return self._group_score(node_id(_COHORT, name), weight, mode, capacity)

    def _group_score(self, nid: str, weight: float, mode: str, capacity: Mapping[str, int]) -> float:
        if mode == USAGE_BASED:
            value = self.weighted.get(nid)
            if value is None:
                value = self.weighted[nid] = weighted_usage(self._usage_state(nid), self.policy)
            return score_of(value, weight)
        if mode == DOMINANT_RESOURCE_SHARE:
            return score_of(_dominant(self.alloc.get(nid, {}), capacity), weight)
        if mode == TIME_AWARE:
            return _ratio(self.alloc.get(nid, {}), self.shares.get(nid, {}), self.ta_demand.get(nid, {}))
        return 0.0

    # --- the fair tree ----------------------------------------------------------------------

    def _new_node(self, kind: str, name: str, nid: str) -> _Node:
        self._seq += 1
        return _Node(kind, name, nid, self._seq)

    def _build_tree(self) -> None:
        self.root = self._new_node(_ROOT, "", "root")
        self.lq_nodes: dict[str, _Node] = {}
        self.ns_nodes: dict[str, _Node] = {}
        cohort_nodes: dict[str, _Node] = {}

        def cohort_node_for(name: str) -> _Node:
            node = cohort_nodes.get(name)
            if node is not None:
                return node
            node = cohort_nodes[name] = self._new_node(_COHORT, name, node_id(_COHORT, name))
            parent_name = self.cohorts[name].parent if name in self.cohorts else None
            node.parent = cohort_node_for(parent_name) if parent_name is not None else self.root
            if parent_name is not None:
                parent_scope = self.cohort_scopes.get(parent_name)
                if parent_scope is not None and parent_scope.fair:
                    node.use_score = True
                    node.propagate = parent_scope.mode in _DIRECT_MODES
                    node.score = self._cohort_score(name, parent_scope.mode, self._capacity(parent_scope))
            return node

        for key in sorted(self.by_local):
            local = self.locals[key]
            queue = local.queue
            if queue.node is None:
                cq_node = queue.node = self._new_node(_CQ, queue.name, node_id(_CQ, queue.name))
                cq_node.cq = queue
                cohort = queue.spec.cohort
                cq_node.parent = cohort_node_for(cohort) if cohort is not None else self.root
                if queue.scored_in_cohort:
                    cq_node.use_score = True
                    cq_node.direct = queue.mode in _DIRECT_MODES
                    cq_node.score = self._queue_score(queue)
            ns_node = self.ns_nodes.get(local.ns_nid)
            if ns_node is None:
                ns_node = self.ns_nodes[local.ns_nid] = self._new_node(_NS, local.spec.namespace, local.ns_nid)
                ns_node.parent = queue.node
                ns_node.cq = queue
                if queue.scope.fair:
                    ns_node.use_score = True
                    ns_node.score = self._namespace_score(local.ns_nid, local.namespace, queue.mode)
            lq_node = self.lq_nodes[key] = self._new_node(_LQ, key, local.nid)
            lq_node.parent = ns_node
            lq_node.cq = queue
            lq_node.lq = local
            lq_node.items = self.by_local[key]
            if queue.scope.fair:
                lq_node.use_score = True
                lq_node.score = self.local_scores[key]
        # Bottom-up initial keys: leaves first, then every level once.
        for lq_node in self.lq_nodes.values():
            self._refresh(lq_node, force=True)
        for queue in self.queues.values():
            if queue.node is not None and queue.live == 0:
                self._park(queue)

    def _key(self, node: _Node) -> tuple | None:
        if node.kind == _LQ:
            if node.idx >= len(node.items):
                return None
            return (0, node.score if node.use_score else 0.0, node.items[node.idx][0], node)
        if node.parked:
            return None
        heap = node.heap
        while heap:
            entry = heap[0]
            child = entry[3]
            if entry[2] != child.version:
                heapq.heappop(heap)
                continue
            child_key = entry[0]
            if node.direct:
                leaf = child_key[3]
                group = 0 if self.tree.within_nominal(node.name, leaf.items[leaf.idx][1].requests) else 1
            elif node.propagate:
                group = child_key[0]
            else:
                group = 0
            return (group, node.score if node.use_score else 0.0, child_key[2], child_key[3])
        return None

    def _refresh(self, node: _Node, stop_at: _Node | None = None, force: bool = False) -> None:
        """Recompute keys from ``node`` up to (not including) ``stop_at``, pushing changes to parents."""
        while node is not stop_at and node is not None:
            new_key = self._key(node)
            if not force and new_key == node.key:
                return
            node.key = new_key
            node.version += 1
            parent = node.parent
            if parent is None:
                return
            if new_key is not None:
                heapq.heappush(parent.heap, (new_key, node.seq, node.version, node))
            node = parent

    # --- the pass -----------------------------------------------------------------------------

    def run(self) -> Plan:
        root = self.root
        while True:
            key = self._key(root)
            if key is None:
                break
            self._visit(key[3], None)
        pending = sorted(self.pending, key=lambda p: (p.cluster_queue, p.position)) if self.reasons else []
        shares = {nid: frozen_map(values) for nid, values in sorted(self.shares.items())}
        return Plan(tuple(self.admissions), tuple(self.evictions), tuple(pending), frozen_map(shares))

    def _visit(self, leaf: _Node, stop_at: _Node | None) -> None:
        _, workload, cls = leaf.items[leaf.idx]
        leaf.idx += 1
        local: _Local = leaf.lq  # type: ignore[assignment]
        queue: _Queue = leaf.cq  # type: ignore[assignment]
        admitted = False
        if local.block is not None:
            self._pending(workload, queue, local.block[0], local.block[1])
        elif queue.blocked is not None:
            self._pending(workload, queue, BLOCKED_BY_STRICT_FIFO_HEAD, queue.blocked)
        else:
            was_live = cls not in queue.failed
            failed = queue.failed.get(cls)
            if failed is not None:
                self._pending_quota(workload, local, queue, failed)
            else:
                admitted = self._try(workload, local, queue, cls)
            count = queue.counts[cls] = queue.counts[cls] - 1
            if was_live and (count == 0 or cls in queue.failed):
                queue.live -= 1
        if admitted:
            self._refresh(leaf, stop_at, force=True)
        else:
            self._refresh(leaf, stop_at)
        if stop_at is None and not queue.node.parked and (queue.live == 0 or queue.blocked is not None):  # type: ignore[union-attr]
            self._park(queue)

    def _park(self, queue: _Queue) -> None:
        """No candidate of this queue can be admitted any more in this pass: finish it off."""
        node = queue.node
        assert node is not None
        if self.reasons:
            while True:
                key = self._key(node)
                if key is None:
                    break
                self._visit(key[3], node)
        node.parked = True
        self._refresh(node)

    def _try(self, workload: Workload, local: _Local, queue: _Queue, cls: Any) -> bool:
        requests = workload.requests
        namespace = local.namespace
        if namespace.quota:
            used = self.ns_used.get(namespace.name, {})
            for resource in sorted(namespace.quota):
                amount = requests.get(resource, 0)
                limit = namespace.quota[resource]
                if amount and used.get(resource, 0) + amount > limit:
                    message = text.namespace_quota(namespace.name, resource, limit, used.get(resource, 0), amount)
                    self._pending(workload, queue, NAMESPACE_QUOTA_EXCEEDED, message)
                    if queue.strict:
                        queue.blocked = text.blocked_by_head(queue.name, workload.key, NAMESPACE_QUOTA_EXCEEDED)
                    return False
        assignment, failure = self.tree.assign(queue.name, requests)
        victims: list[tuple[Running, str]] = []
        if failure is not None and queue.spec.preemption.enabled:
            found = self._preempt(workload, local, queue)
            if found is not None:
                assignment, victims = found
        if assignment is None:
            assert failure is not None
            fits_at_start = self.initial is not None and self.initial.assign(queue.name, requests)[0] is not None
            record = (failure, fits_at_start)
            queue.failed[cls] = record
            self._pending_quota(workload, local, queue, record)
            if queue.strict:
                queue.blocked = text.blocked_by_head(queue.name, workload.key, INSUFFICIENT_QUOTA)
            return False
        self._admit(workload, local, queue, assignment, victims)
        return True

    def _admit(self, workload: Workload, local: _Local, queue: _Queue, assignment: dict[str, str],
               victims: list[tuple[Running, str]]) -> None:
        requests = workload.requests
        amounts = flavor_amounts(requests, assignment)
        chosen_with = self.local_scores.get(local.spec.key, 0.0)
        queue_score = queue.node.score if queue.node is not None else 0.0
        for item, rule in victims:
            self.evictions.append(Eviction(item.workload.key, item.local_queue, item.cluster_queue, PREEMPTED,
                                           text.preempted(workload.key, rule), workload.key))
        self.tree.add(queue.name, amounts)
        _add(self.ns_used.setdefault(local.namespace.name, {}), requests, 1)
        for nid in local.path:
            _add(self.alloc.setdefault(nid, {}), requests, 1)
        penalty = entry_penalty(requests, self.policy) if self.use_penalty else {}
        if penalty and queue.mode == USAGE_BASED:
            extra = sum(self.policy.resource_weight(r) * a for r, a in sorted(penalty.items()))
            for nid in (local.nid, *local.path[2:]):
                current = self.weighted.get(nid)
                if current is None:
                    current = weighted_usage(self._usage_state(nid), self.policy)
                self.weighted[nid] = current + extra
        borrowing = any(self.tree.is_borrowing(queue.name, fr) for fr in amounts)
        self.admissions.append(Admission(workload.key, local.spec.key, queue.name, frozen_map(assignment),
                                         frozen_map(penalty), borrowing))
        queue.recent.pop(local.spec.key, None)
        queue.recent[local.spec.key] = chosen_with
        self._rescore(local, refresh=False)
        for item, _ in victims:
            self._rescore(self.locals[item.local_queue], refresh=True)
        recent = self.unit_recent.setdefault(queue.unit, {})
        recent.pop(queue.name, None)
        recent[queue.name] = queue_score

    def _rescore(self, local: _Local, refresh: bool) -> None:
        """Recompute the scores on a LocalQueue's path after its allocation or usage changed.

        With ``refresh`` the fair tree re-ranks from the deepest node of the path it holds (the
        caller refreshes itself when it is about to anyway).
        """
        key = local.spec.key
        queue = local.queue
        self.local_scores[key] = self._local_score(local)
        leaf = self.lq_nodes.get(key)
        if leaf is not None and leaf.use_score:
            leaf.score = self.local_scores[key]
        ns_node = self.ns_nodes.get(local.ns_nid)
        if ns_node is not None and ns_node.use_score:
            ns_node.score = self._namespace_score(local.ns_nid, local.namespace, queue.mode)
        cq_node = queue.node
        if cq_node is not None and cq_node.use_score:
            cq_node.score = self._queue_score(queue)
        node = cq_node.parent if cq_node is not None else None
        while node is not None and node.kind == _COHORT:
            if node.use_score:
                parent_name = self.cohorts[node.name].parent if node.name in self.cohorts else None
                scope = self.cohort_scopes.get(parent_name) if parent_name is not None else None
                if scope is not None:
                    node.score = self._cohort_score(node.name, scope.mode, self._capacity(scope))
            node = node.parent
        if refresh:
            start = leaf or ns_node or cq_node
            if start is not None:
                self._refresh(start, force=True)

    # --- reasons ----------------------------------------------------------------------------

    def _pending(self, workload: Workload, queue: _Queue, code: str, message: str) -> None:
        if not self.reasons:
            return
        queue.position += 1
        self.pending.append(PendingReason(workload.key, workload.local_queue, queue.name, code, message, queue.position))

    def _pending_quota(self, workload: Workload, local: _Local, queue: _Queue, record: tuple[FitFailure, bool]) -> None:
        if not self.reasons:
            return
        failure, fits_at_start = record
        shortage = text.insufficient_quota(queue.name, failure)
        if fits_at_start and queue.scope.fair:
            own = local.spec.key
            for other, score in reversed(queue.recent.items()):
                if other != own:
                    message = text.waiting_for_fair_share(
                        "LocalQueue", other, text.format_score(queue.mode, score), own,
                        text.format_score(queue.mode, self.local_scores[own]), shortage)
                    self._pending(workload, queue, WAITING_FOR_FAIR_SHARE, message)
                    return
            if queue.scored_in_cohort:
                own_score = queue.node.score if queue.node is not None else 0.0
                for other, score in reversed(self.unit_recent.get(queue.unit, {}).items()):
                    if other != queue.name:
                        message = text.waiting_for_fair_share(
                            "ClusterQueue", other, text.format_score(queue.mode, score), queue.name,
                            text.format_score(queue.mode, own_score), shortage)
                        self._pending(workload, queue, WAITING_FOR_FAIR_SHARE, message)
                        return
        self._pending(workload, queue, INSUFFICIENT_QUOTA, shortage)

    # --- preemption ---------------------------------------------------------------------------

    def _preempt(self, workload: Workload, local: _Local, queue: _Queue) -> tuple[dict[str, str], list[tuple[Running, str]]] | None:
        """Try the opted-in preemption rules in turn; the first that makes room wins."""
        preemption = queue.spec.preemption
        requests = workload.requests
        tree = self.tree

        def fits() -> dict[str, str] | None:
            return tree.assign(queue.name, requests)[0]

        def overlaps(item: Running) -> bool:
            return any(r in requests for r in item.workload.requests)

        def release(item: Running) -> None:
            self._release(item, self._victim_path(item))

        def restore(item: Running) -> None:
            self._take(item, self._victim_path(item))

        attempts = []
        within = preemption.within_cluster_queue
        if within != PREEMPT_NEVER:
            candidates = [
                item for item in self.running[queue.name].values()
                if overlaps(item) and _may_preempt(within, workload, item.workload)
            ]
            candidates.sort(key=lambda item: (-self.local_scores.get(item.local_queue, 0.0), item.workload.priority,
                                              -item.admitted_at, item.workload.key))
            attempts.append((candidates, fits, None, f"to make room in ClusterQueue {queue.name}"))
        reclaim = preemption.reclaim_within_cohort
        if reclaim != PREEMPT_NEVER and queue.spec.cohort is not None and tree.within_nominal(queue.name, requests):
            candidates = [
                item for other in self.unit_queues[queue.unit] if other != queue.name
                for item in self.running[other].values()
                if overlaps(item) and (reclaim == PREEMPT_ANY or item.workload.priority < workload.priority)
            ]
            candidates.sort(key=lambda item: (item.workload.priority, -item.admitted_at, item.workload.key))

            def fits_nominal() -> dict[str, str] | None:
                assignment = fits()
                if assignment is None:
                    return None
                for fr, amount in flavor_amounts(requests, assignment).items():
                    if tree.usage(queue.name, fr) + amount > tree.nominal(queue.name, fr):
                        return None
                return assignment

            def borrowing(item: Running) -> bool:
                return any(tree.is_borrowing(item.cluster_queue, fr) for fr in item.amounts)

            attempts.append((candidates, fits_nominal, borrowing, f"to reclaim the nominal quota of ClusterQueue {queue.name}"))
        if queue.mode == TIME_AWARE:
            attempts.extend(self._time_aware_attempts(workload, local, queue, fits, overlaps))
        for candidates, check, still_eligible, rule in attempts:
            if not candidates:
                continue
            found = find_victims(candidates, check, release, restore, still_eligible)
            if found is not None:
                assignment, chosen = found
                for item in chosen:
                    del self.running[item.cluster_queue][item.workload.key]
                return assignment, [(item, rule) for item in chosen]
        return None

    def _time_aware_attempts(self, workload: Workload, local: _Local, queue: _Queue, fits, overlaps) -> list:
        """KAI reclaim: a queue whose allocation plus this job stays within its fair share may evict
        workloads of sibling queues that are above theirs."""
        requests = workload.requests
        preemption = queue.spec.preemption
        attempts = []

        def within_share(nid: str) -> bool:
            share, alloc = self.shares.get(nid, {}), self.alloc.get(nid, {})
            return all(alloc.get(r, 0) + a <= share.get(r, 0) for r, a in requests.items() if a)

        def over_share(nid: str) -> bool:
            share, alloc = self.shares.get(nid, {}), self.alloc.get(nid, {})
            return any(alloc.get(r, 0) > share.get(r, 0) for r in requests if requests[r])

        reclaim = preemption.reclaim_within_cohort
        cq_nid = node_id(_CQ, queue.name)
        if reclaim != PREEMPT_NEVER and queue.scored_in_cohort and within_share(cq_nid):
            candidates = [
                item for other in self.unit_queues[queue.unit] if other != queue.name
                and self.queues[other].scope == queue.scope and over_share(node_id(_CQ, other))
                for item in self.running[other].values()
                if overlaps(item) and (reclaim == PREEMPT_ANY or item.workload.priority < workload.priority)
            ]
            candidates.sort(key=lambda item: (-self._over_ratio(node_id(_CQ, item.cluster_queue)), item.workload.priority,
                                              -item.admitted_at, item.workload.key))
            attempts.append((candidates, fits, lambda item: over_share(node_id(_CQ, item.cluster_queue)),
                             f"to give ClusterQueue {queue.name} its fair share (TimeAware)"))
        within = preemption.within_cluster_queue
        if within != PREEMPT_NEVER and within_share(local.nid):
            candidates = [
                item for item in self.running[queue.name].values()
                if item.local_queue != local.spec.key and over_share(node_id(_LQ, item.local_queue))
                and overlaps(item) and _may_preempt(within, workload, item.workload)
            ]
            candidates.sort(key=lambda item: (-self._over_ratio(node_id(_LQ, item.local_queue)), item.workload.priority,
                                              -item.admitted_at, item.workload.key))
            attempts.append((candidates, fits, lambda item: over_share(node_id(_LQ, item.local_queue)),
                             f"to give LocalQueue {local.spec.key} its fair share (TimeAware)"))
        return attempts

    def _over_ratio(self, nid: str) -> float:
        return _ratio(self.alloc.get(nid, {}), self.shares.get(nid, {}), self.alloc.get(nid, {}))

    def _victim_path(self, item: Running) -> tuple[str, ...]:
        local = self.locals[item.local_queue]
        if item.cluster_queue == local.queue.name:
            return local.path
        return self._path_in(local, item.cluster_queue)


def _may_preempt(policy: str, preemptor: Workload, victim: Workload) -> bool:
    if policy == PREEMPT_LOWER_PRIORITY:
        return victim.priority < preemptor.priority
    if policy == PREEMPT_LOWER_OR_NEWER_EQUAL:
        return victim.priority < preemptor.priority or (
            victim.priority == preemptor.priority and victim.queued_at > preemptor.queued_at
        )
    return False


def _first(item: tuple) -> tuple:
    return item[0]


def _add(target: dict[str, int], amounts: Mapping[str, int], sign: int) -> None:
    for resource, amount in amounts.items():
        if amount:
            target[resource] = target.get(resource, 0) + sign * amount


def _sum_maps(*maps: Mapping[str, float]) -> dict[str, float]:
    total: dict[str, float] = {}
    for mapping in maps:
        for resource, amount in mapping.items():
            total[resource] = total.get(resource, 0) + amount
    return total


def _dominant(alloc: Mapping[str, int], capacity: Mapping[str, int]) -> float:
    """KEP-752 / DRF dominant share: ``max_r allocated_r / capacity_r``."""
    share = 0.0
    for resource, amount in alloc.items():
        if amount <= 0:
            continue
        cap = capacity.get(resource, 0)
        value = amount / cap if cap > 0 else INFINITE_SCORE
        if value > share:
            share = value
    return share


def _ratio(alloc: Mapping[str, float], share: Mapping[str, float], demand: Mapping[str, float]) -> float:
    """TimeAware order: the worst ``allocated / fair share`` over the resources a node wants.

    Below 1 means below its fair share (served first); a resource with no fair share counts as
    1 while unallocated and as +inf once allocated.
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
