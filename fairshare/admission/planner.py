"""The admission planner: one pass over a snapshot, ``plan(snapshot, now) -> Plan``.

How a pass runs:

1. Admitted workloads whose queue is drained (``HoldAndDrain`` stop policy, or a hold with
   ``drain``) are evicted first, so their quota is free for the rest of the pass.
2. Pending workloads sit in a fair tree: root -> cohorts -> ClusterQueues -> namespaces ->
   LocalQueues -> workloads (priority, then queue timestamp, then name). Every node picks the
   child with the lowest key ``(group, score, best candidate's order)``. ``score`` counts only
   where the node is inside a fair admission scope (see ``scopes``). ``group`` orders the
   ClusterQueues of a cohort: 0 when the candidate fits its ClusterQueue's own nominal quota
   (admitted directly, as Kueue does and as KEP-4136 says for cohort scopes), 1 when it must
   borrow; TimeAware cohort scopes leave it out (fair shares already put deserved quota first).
3. The best candidate is tried: holds and stop policies, then the namespace quota, then flavor
   assignment against the quota tree, then (if its ClusterQueue opted in) preemption. After
   every single admission the scores on its path change (entry penalty, new allocation) and the
   tree re-ranks; each step costs O(depth x log(children)) with lazy heaps.
4. ``StrictFIFO``: a head that cannot be admitted blocks its ClusterQueue for the rest of the
   pass. ``BestEffortFIFO``: it stays pending and the next candidate is tried.

Two rules keep a pass linear in the number of candidates. Once a request shape (a *class*:
requests, plus priority / timestamp / LocalQueue where preemption depends on them) fails a
ClusterQueue's quota, later candidates of the same class in that queue fail too without a
second check (without preemption quota only shrinks during a pass, so this changes nothing;
with it, room freed beyond what a preemptor needed waits for the next pass). Such dead
candidates are dismissed as soon as they reach the head of their LocalQueue, so the live ones
are visited in the same order whether reasons are wanted or not. And once every class of a
ClusterQueue has failed, the queue is done: its remaining candidates get their reasons in the
queue's order without further checks (or are skipped when ``reasons=False``).

Positions count, per ClusterQueue from 1, the order in which the pass settled its pending
candidates: the fair order, with dead candidates placed where their LocalQueue reached them.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Mapping
from typing import Any

from fairshare.admission import reasons as text
from fairshare.admission.candidates import PendingIndex, order_key
from fairshare.admission.fair_tree import FairTree
from fairshare.admission.pass_state import (
    CLUSTER_QUEUE,
    COHORT,
    QUEUE_NAMESPACE,
    ClassFailure,
    LocalState,
    QueueState,
    TreeNode,
    add_amounts,
    scope_capacity,
)
from fairshare.admission.preemption_rules import PreemptionRules
from fairshare.admission.scoring import Scoring, ShareLayout
from fairshare.errors import ValidationError
from fairshare.policy import FULL_USAGE, FairSharingPolicy
from fairshare.preemption.preemption import Running
from fairshare.quota.quota import FlavorResource, QuotaTree, flavor_amounts
from fairshare.quota.scopes import Scope, cohort_chains, cohort_scope, queue_chain, queue_scope
from fairshare.types import (
    BLOCKED_BY_STRICT_FIFO_HEAD,
    INSUFFICIENT_QUOTA,
    NAMESPACE_QUOTA_EXCEEDED,
    PREEMPT_NEVER,
    PREEMPTED,
    QUEUE_STOPPED,
    STOP_HOLD_AND_DRAIN,
    STOP_NONE,
    TIME_AWARE,
    USAGE_BASED,
    WAITING_FOR_FAIR_SHARE,
    Admission,
    Cohort,
    Eviction,
    Namespace,
    PendingReason,
    Plan,
    Shortage,
    Snapshot,
    Workload,
    frozen_map,
    node_id,
)
from fairshare.usage.usage import entry_penalty, weighted_usage

# The reasons that quote the queue's capacity (figures that move with every admission): past a
# queue's first ``explain_first`` waiting workloads, these are explained by reference to its head.
_QUOTA_CODES = frozenset({INSUFFICIENT_QUOTA, WAITING_FOR_FAIR_SHARE})


def plan(
    snapshot: Snapshot,
    now: float,
    *,
    reasons: bool = True,
    entry_penalty: bool = True,
    pending: PendingIndex | None = None,
    explain_first: int | None = None,
    share_layout: ShareLayout | None = None,
) -> Plan:
    """Run one admission pass over ``snapshot`` at time ``now``.

    ``reasons=False`` skips pending reasons (the simulator's inner passes, which only need the
    admissions and evictions; the decisions are the same). ``entry_penalty=False`` turns the
    KEP-4136 entry penalty off, only to show what it prevents. ``pending``: the pending
    workloads, already grouped (see ``candidates.PendingIndex``); pending workloads in
    ``snapshot.workloads`` are then ignored. Only used without reasons.

    ``explain_first`` (None: every workload is explained in full): per ClusterQueue, the waiting
    workloads after the first ``explain_first`` that wait for the queue's quota
    (InsufficientQuota, WaitingForFairShare) are explained by reference to the first of the
    queue's workloads that does, its *head*: one sentence per queue (``reasons.waiting_behind``,
    also in ``Plan.by_reference``), with code InsufficientQuota. Their sentence is the same for
    all of them, so what each stores (code and queue) does not change with every admission
    ahead of them. Held, stopped and StrictFIFO-blocked workloads keep their own sentence (it
    quotes no figure), and so do those over their namespace's quota (its figures move only with
    that namespace's work, and the queue's head says nothing about it). Decisions, positions
    and the first ``explain_first`` reasons are those of a full explanation.

    ``share_layout``: the shape of the TimeAware fair-share trees (``scoring.ShareLayout``) from
    an earlier pass or ``Scoring.time_aware_shares`` call over the same cohorts, ClusterQueues,
    namespaces, LocalQueues and quotas; the pass uses it, and its per-namespace share nodes,
    instead of reading its own (the simulator keeps one per run). The plan is the same.

    The cyclic garbage collector is paused for the pass: a pass allocates hundreds of thousands
    of small tuples that live until it ends, and letting the collector rescan them every few
    hundred allocations costs more than the pass itself. It is restored afterwards.
    """
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        if explain_first is not None and explain_first < 1:
            raise ValueError("explain_first: at least 1")
        planner = _Planner(snapshot, now, reasons, entry_penalty, pending, share_layout)
        planner.explain_first = explain_first
        return planner.run()
    finally:
        if paused:
            gc.enable()


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
            by_queue[queue.name] = scope_capacity(tree, queue_scope(queue, cohorts, chains))
        result[lq.key] = dict(by_queue[queue.name])
    return result


class _Planner:
    """One admission pass: the pass state, and the parts that work on it.

    The parts are objects the planner builds over its own state and calls explicitly:
    ``scoring`` (scores per admission mode, TimeAware fair shares), ``fair_tree`` (building,
    ranking and walking the fair tree) and ``preemption_rules`` (who may be preempted for whom).
    They read the state through ``state`` (this planner, see ``pass_state.PassState``).
    """

    def __init__(
        self,
        snapshot: Snapshot,
        now: float,
        reasons: bool,
        use_penalty: bool,
        index: PendingIndex | None = None,
        share_layout: ShareLayout | None = None,
    ) -> None:
        if index is not None and reasons:
            raise ValueError("a PendingIndex is only used without reasons")
        self.index = index
        self.explain_first: int | None = None
        self.snapshot = snapshot
        self.now = now
        self.reasons = reasons
        self.policy: FairSharingPolicy = snapshot.policy
        self.use_penalty = use_penalty
        self.full_usage = snapshot.policy.in_pass_accounting == FULL_USAGE
        self.admissions: list[Admission] = []
        self.evictions: list[Eviction] = []
        self.scoring = Scoring(self)
        self.fair_tree = FairTree(self, self.scoring)
        self.preemption_rules = PreemptionRules(self, self.scoring)
        self._index()
        self.tree = QuotaTree(
            snapshot.cohorts, snapshot.cluster_queues, snapshot.unavailable_flavors, snapshot.flavor_clusters
        )
        self.tree_version = 0  # bumped whenever the tree's usage changes (memo of ``FairTree._profile``)
        self.lendables: dict[str, dict[str, int]] = {}
        self.reaches: dict[str, dict[str, int]] = {}
        self._blocks()
        self._load_admitted()
        self.initial: QuotaTree | None = None
        if reasons:
            self.initial = QuotaTree(
                snapshot.cohorts, snapshot.cluster_queues, snapshot.unavailable_flavors, snapshot.flavor_clusters
            )
            for running in self.running.values():
                for item in running.values():
                    self.initial.add(item.cluster_queue, item.amounts)
        self._group_pending()
        self.shares: dict[str, dict[str, int]] = {}
        self.ta_demand: dict[str, Mapping[str, float]] = {}
        self.unit_recent: dict[str, dict[str, float]] = {}
        self.scoring.time_aware_shares(layout=share_layout)
        self.scoring.initial_scores()
        self.fair_tree.build()

    # --- indexing ---------------------------------------------------------------------------

    def _index(self) -> None:
        s = self.snapshot
        self.cohorts: dict[str, Cohort] = {c.name: c for c in s.cohorts}
        self.chains = cohort_chains(self.cohorts)
        self.namespaces: dict[str, Namespace] = {n.name: n for n in s.namespaces}
        self.queues: dict[str, QueueState] = {}
        self.unit_queues: dict[str, list[str]] = {}
        for spec in s.cluster_queues:
            chain = queue_chain(spec, self.chains)
            unit = node_id(COHORT, chain[-1]) if chain else node_id(CLUSTER_QUEUE, spec.name)
            path = (node_id(CLUSTER_QUEUE, spec.name), *(node_id(COHORT, c) for c in chain))
            queue = QueueState(spec, queue_scope(spec, self.cohorts, self.chains), unit, path)
            self.queues[spec.name] = queue
            self.unit_queues.setdefault(unit, []).append(spec.name)
        self.locals: dict[str, LocalState] = {}
        for lq_spec in s.local_queues:
            cq_state = self.queues.get(lq_spec.cluster_queue)
            if cq_state is None:
                raise ValidationError(
                    f"localQueues.{lq_spec.key}.clusterQueue", f"unknown ClusterQueue {lq_spec.cluster_queue!r}"
                )
            namespace = self.namespaces.get(lq_spec.namespace) or Namespace(lq_spec.namespace)
            self.namespaces.setdefault(lq_spec.namespace, namespace)
            self.locals[lq_spec.key] = LocalState(lq_spec, cq_state, namespace)
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
                found.append(
                    (
                        QUEUE_STOPPED,
                        text.queue_stopped("ClusterQueue", queue.name, queue.stop_policy),
                        queue.stop_policy == STOP_HOLD_AND_DRAIN,
                    )
                )
            if spec.stop_policy != STOP_NONE:
                found.append(
                    (
                        QUEUE_STOPPED,
                        text.queue_stopped("LocalQueue", spec.key, spec.stop_policy),
                        spec.stop_policy == STOP_HOLD_AND_DRAIN,
                    )
                )
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
        # The quota tree takes each ClusterQueue's running usage as one sum: adding amounts one
        # by one or summed leaves the same usage on every node (what passes to the parent
        # telescopes), and a snapshot may hold thousands of admitted entries.
        per_queue: dict[str, dict[FlavorResource, int]] = {}
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
            item = Running(
                workload,
                local.spec.key,
                local.spec.namespace,
                queue_name,
                amounts,
                workload.admitted_at if workload.admitted_at is not None else -math.inf,
            )
            self.running[queue_name][workload.key] = item
            self._count(item, local.path if queue_name == local.queue.name else self.path_in(local, queue_name))
            add_amounts(per_queue.setdefault(queue_name, {}), amounts, 1)
        for queue_name, amounts in per_queue.items():
            self.tree.add(queue_name, amounts)
            self.queues[queue_name].nominal_memo.clear()
        self.tree_version += 1

    def path_in(self, local: LocalState, queue_name: str) -> tuple[str, ...]:
        queue = self.queues[queue_name]
        return (local.nid, node_id(QUEUE_NAMESPACE, f"{queue_name}/{local.spec.namespace}"), *queue.path)

    def take(self, item: Running, path: tuple[str, ...]) -> None:
        """Count a running workload's usage (quota tree, namespace, allocation on its path)."""
        self.tree.add(item.cluster_queue, item.amounts)
        self.tree_version += 1
        self.queues[item.cluster_queue].nominal_memo.clear()
        self._count(item, path)

    def _count(self, item: Running, path: tuple[str, ...]) -> None:
        """A running workload's requests on its namespace and on the allocation of its path."""
        add_amounts(self.ns_used.setdefault(item.namespace, {}), item.workload.requests, 1)
        for nid in path:
            add_amounts(self.alloc.setdefault(nid, {}), item.workload.requests, 1)

    def release(self, item: Running, path: tuple[str, ...]) -> None:
        self.tree.remove(item.cluster_queue, item.amounts)
        self.tree_version += 1
        self.queues[item.cluster_queue].nominal_memo.clear()
        add_amounts(self.ns_used.setdefault(item.namespace, {}), item.workload.requests, -1)
        for nid in path:
            add_amounts(self.alloc.setdefault(nid, {}), item.workload.requests, -1)

    def _local_of(self, workload: Workload) -> LocalState:
        local = self.locals.get(workload.local_queue)
        if local is None:
            raise ValidationError(
                f"workloads.{workload.key}.localQueue", f"unknown LocalQueue {workload.local_queue!r}"
            )
        return local

    # --- pending workloads ------------------------------------------------------------------

    def _group_pending(self) -> None:
        """Pending workloads per LocalQueue in queue order (per class too, without reasons)."""
        self.by_local: dict[str, Any] = {}
        self.demand: dict[str, dict[str, int]] = {}
        by_local = self.by_local
        info_of: dict[str, tuple] = {}
        reasons = self.reasons
        if self.index is not None:
            for key in self.index.local_queues():
                if key not in self.locals:
                    raise ValidationError(f"workloads.{key}", f"unknown LocalQueue {key!r}")
                if self.locals[key].block is None:
                    by_local[key] = self.index.classes(key)
        for workload in () if self.index is not None else self.snapshot.workloads:
            if workload.admitted:
                continue
            key = workload.local_queue
            info = info_of.get(key)
            if info is None:
                local = self._local_of(workload)
                if reasons:
                    info = (by_local.setdefault(key, []), None)
                elif local.block is None:
                    info = (by_local.setdefault(key, {}), local.class_of)
                else:
                    info = (None, None)
                info_of[key] = info
            container, class_of = info
            if class_of is None:
                if container is not None:
                    container.append(workload)
                continue
            cls = class_of(workload)
            per_class = container.get(cls)
            if per_class is None:
                container[cls] = [workload]
            else:
                per_class.append(workload)
        for key, container in by_local.items():
            local = self.locals[key]
            counts = local.queue.counts
            if reasons:
                container.sort(key=order_key)
                if local.block is None:
                    counts.update(map(local.class_of, container))
                lists = [container] if local.block is None else []
            else:
                lists = list(container.values())
                if self.index is None:  # an index keeps its lists in order
                    for per_class in lists:
                        per_class.sort(key=order_key)
                counts.update({cls: len(per_class) for cls, per_class in container.items()})
            if local.queue.mode == TIME_AWARE:
                demand = self.demand.setdefault(local.nid, {})
                for per_class in lists:
                    for workload in per_class:
                        for resource, amount in workload.requests.items():
                            demand[resource] = demand.get(resource, 0) + amount
        for queue in self.queues.values():
            queue.live = len(queue.counts)

    # --- the pass -----------------------------------------------------------------------------

    def run(self) -> Plan:
        root = self.fair_tree.root
        while True:
            key = self.fair_tree.key(root)
            if key is None:
                break
            self._visit(key[4], key[3], None)
        pending: list[PendingReason] = []
        by_reference: dict[str, str] = {}
        shortages_by_reference: dict[str, tuple[Shortage, ...]] = {}
        if self.reasons:
            for name in sorted(self.queues):
                found = self.queues[name].pending
                if self.explain_first is not None and len(found) > self.explain_first:
                    found = self._by_reference(name, found, self.explain_first, by_reference, shortages_by_reference)
                pending.extend(found)
        shares = {nid: frozen_map(values) for nid, values in sorted(self.shares.items())}
        modes = frozen_map({name: self.queues[name].scope.mode for name in sorted(self.queues)})
        self.fair_tree.dismantle()
        # The parts point back at the planner (``state``): let them go, so the pass is freed at once
        # without the collector (``plan`` pauses it).
        del self.scoring, self.fair_tree, self.preemption_rules
        return Plan(
            self.now,
            tuple(self.admissions),
            tuple(self.evictions),
            tuple(pending),
            frozen_map(shares),
            modes,
            frozen_map(by_reference),
            frozen_map(shortages_by_reference),
        )

    @staticmethod
    def _by_reference(
        name: str,
        found: list[PendingReason],
        explained: int,
        by_reference: dict[str, str],
        shortages_by_reference: dict[str, tuple[Shortage, ...]],
    ) -> list[PendingReason]:
        """``found`` (one ClusterQueue's reasons, in position order) with the quota reasons after
        the first ``explained`` replaced by the queue's shared sentence (see ``plan``)."""
        head = next((reason for reason in found if reason.code in _QUOTA_CODES), None)
        if head is None:
            return found
        sentence = text.waiting_behind(name, explained, head.workload, head.message)
        by_reference[name] = sentence
        shortages_by_reference[name] = head.shortages
        out = found[:explained]
        for reason in found[explained:]:
            if reason.code in _QUOTA_CODES and reason is not head:
                reason = PendingReason(
                    reason.workload,
                    reason.local_queue,
                    reason.cluster_queue,
                    INSUFFICIENT_QUOTA,
                    sentence,
                    reason.position,
                    head.shortages,
                )
            out.append(reason)
        return out

    def _visit(self, leaf: TreeNode, order: tuple, stop_at: TreeNode | None) -> None:
        """Try the candidate at the head of ``leaf`` (chosen for its order key ``order``)."""
        head = self.fair_tree.head(leaf)
        if head is None or head.order != order:  # stale: dead candidates were dismissed since
            self.fair_tree.refresh(leaf, stop_at, force=True)
            return
        cls = leaf.head_cls
        workload = self.fair_tree.pop(leaf)
        local: LocalState = leaf.lq  # type: ignore[assignment]
        queue: QueueState = leaf.cq  # type: ignore[assignment]
        admitted = False
        if local.block is not None:
            self._pending(workload, queue, local.block[0], local.block[1])
        elif queue.blocked is not None:
            self._pending(workload, queue, BLOCKED_BY_STRICT_FIFO_HEAD, queue.blocked)
        else:
            failed = queue.failed.get(cls)
            was_live = failed is None
            if failed is not None:
                self.pending_quota(workload, local, queue, failed)
            else:
                admitted = self._try(workload, local, queue, cls)
            counts = queue.counts
            count = counts[cls] = counts[cls] - 1
            if was_live and (count == 0 or cls in queue.failed):
                queue.live -= 1
        self.fair_tree.refresh(leaf, stop_at, force=admitted)
        if stop_at is None and (queue.live == 0 or queue.blocked is not None) and not queue.node.parked:  # type: ignore[union-attr]
            self.park(queue)

    def park(self, queue: QueueState) -> None:
        """No candidate of this queue can be admitted any more in this pass: finish it off.

        With reasons, the remaining candidates get theirs in the queue's order. The scores are
        frozen from here on, so that order is a merge that a sort reproduces whenever namespaces
        with equal scores hold LocalQueues of equal scores (always true without a fair mode);
        otherwise the fair tree walks it.
        """
        node = queue.node
        assert node is not None
        if self.reasons and not self._drain_sorted(queue):
            while True:
                key = self.fair_tree.key(node)
                if key is None:
                    break
                self._visit(key[4], key[3], node)
        node.parked = True
        self.fair_tree.refresh(node)

    def _drain_sorted(self, queue: QueueState) -> bool:
        buckets: dict[tuple, list[TreeNode]] = {}
        ns_scores: dict[tuple, set[tuple]] = {}
        for leaf in queue.leaves:
            if leaf.idx >= len(leaf.items):
                continue
            parent = leaf.parent
            ns_score = (
                (parent.score, parent.tie)
                if parent is not None and parent.kind == QUEUE_NAMESPACE and parent.use_score
                else (0.0, 0.0)
            )
            lq_score = (leaf.score, leaf.tie) if leaf.use_score else (0.0, 0.0)
            buckets.setdefault((ns_score, lq_score), []).append(leaf)
            ns_scores.setdefault(ns_score, set()).add(lq_score)
        owners: dict[tuple, set[int]] = {}
        for (ns_score, _), leaves in buckets.items():
            owners.setdefault(ns_score, set()).update(id(leaf.parent) for leaf in leaves)
        for ns_score, lq_scores in ns_scores.items():
            if len(lq_scores) > 1 and len(owners[ns_score]) > 1:
                return False  # tied namespaces with different LocalQueue scores: a real merge
        out = queue.pending
        name = queue.name
        position = queue.position
        # Per LocalQueue: a fixed sentence (held, stopped, blocked) or how to find one per class.
        fixed_of: dict[str, tuple[str, str, tuple[Shortage, ...]] | None] = {}
        sentences_of: dict[str, dict[Any, tuple[str, str, tuple[Shortage, ...]]]] = {}
        for bucket_leaves in buckets.values():
            for leaf in bucket_leaves:
                local = leaf.lq
                assert local is not None  # the leaves of a queue are its LocalQueue nodes
                if local.block is not None:
                    fixed_of[leaf.name] = (*local.block, ())
                elif queue.blocked is not None:
                    fixed_of[leaf.name] = (BLOCKED_BY_STRICT_FIFO_HEAD, queue.blocked, ())
                else:
                    fixed_of[leaf.name] = None
                    sentences_of[leaf.name] = {}
        for bucket in sorted(buckets):
            leaves = buckets[bucket]
            if len(leaves) == 1:  # one LocalQueue: its remaining candidates, in order
                leaf = leaves[0]
                key = leaf.name
                fixed = fixed_of[key]
                items = leaf.items[leaf.idx :]
                if fixed is not None:
                    code, message, _ = fixed
                    for workload in items:
                        position += 1
                        out.append(PendingReason(workload.key, key, name, code, message, position))
                else:
                    local = self.locals[key]
                    class_of = local.class_of
                    per_class = sentences_of[key]
                    for workload in items:
                        cls = class_of(workload)
                        sentence = per_class.get(cls)
                        if sentence is None:
                            sentence = per_class[cls] = self._quota_reason(local, queue, queue.failed[cls])
                        position += 1
                        out.append(PendingReason(workload.key, key, name, *sentence[:2], position, sentence[2]))
                leaf.idx = len(leaf.items)
                continue
            items = [workload for leaf in leaves for workload in leaf.items[leaf.idx :]]
            items.sort(key=order_key)  # runs already in order: a merge
            for workload in items:
                key = workload.local_queue
                sentence = fixed_of[key]
                if sentence is None:
                    local = self.locals[key]
                    cls = local.class_of(workload)
                    per_class = sentences_of[key]
                    sentence = per_class.get(cls)
                    if sentence is None:
                        sentence = per_class[cls] = self._quota_reason(local, queue, queue.failed[cls])
                position += 1
                out.append(PendingReason(workload.key, key, name, *sentence[:2], position, sentence[2]))
            for leaf in leaves:
                leaf.idx = len(leaf.items)
        queue.position = position
        return True

    def _try(self, workload: Workload, local: LocalState, queue: QueueState, cls: Any) -> bool:
        requests = workload.requests
        namespace = local.namespace
        if namespace.quota:
            used = self.ns_used.get(namespace.name, {})
            over = [
                (resource, limit, used.get(resource, 0), requests.get(resource, 0))
                for resource, limit in sorted(namespace.quota.items())
                if requests.get(resource, 0) and used.get(resource, 0) + requests.get(resource, 0) > limit
            ]
            if over:
                message = text.namespace_quotas(namespace.name, over)
                if namespace.within_namespace != PREEMPT_NEVER:
                    found = self.preemption_rules.preempt_for_namespace(workload, local, queue)
                    if found is not None:
                        self._admit(workload, local, queue, found[0], found[1])
                        return True
                self._pending(workload, queue, NAMESPACE_QUOTA_EXCEEDED, message)
                if queue.strict:
                    queue.blocked = text.blocked_by_head(queue.name, workload.key, NAMESPACE_QUOTA_EXCEEDED)
                return False
        bound = workload.bound_cluster
        assignment, failure = self.tree.assign(queue.name, requests, bound)
        victims: list[tuple[Running, str]] = []
        if failure is not None and queue.spec.preemption.enabled:
            found = self.preemption_rules.preempt(workload, local, queue)
            if found is not None:
                assignment, victims = found
        if assignment is None:
            assert failure is not None
            fits_at_start = self.initial is not None and self.initial.assign(queue.name, requests, bound)[0] is not None
            record = ClassFailure(failure, fits_at_start)
            queue.failed[cls] = record
            self.pending_quota(workload, local, queue, record)
            if queue.strict:
                queue.blocked = text.blocked_by_head(queue.name, workload.key, INSUFFICIENT_QUOTA)
            return False
        self._admit(workload, local, queue, assignment, victims)
        return True

    def _admit(
        self,
        workload: Workload,
        local: LocalState,
        queue: QueueState,
        assignment: dict[str, str],
        victims: list[tuple[Running, str]],
    ) -> None:
        requests = workload.requests
        amounts = flavor_amounts(requests, assignment)
        chosen_with = self.scoring.local_scores.get(local.spec.key, 0.0)
        queue_score = queue.node.score if queue.node is not None else 0.0
        for item, rule in victims:
            self.evictions.append(
                Eviction(
                    item.workload.key,
                    item.local_queue,
                    item.cluster_queue,
                    PREEMPTED,
                    text.preempted(workload.key, rule, workload.priority_class, workload.priority),
                    workload.key,
                )
            )
        self.tree.add(queue.name, amounts)
        self.tree_version += 1
        queue.nominal_memo.clear()
        add_amounts(self.ns_used.setdefault(local.namespace.name, {}), requests, 1)
        for nid in local.path:
            add_amounts(self.alloc.setdefault(nid, {}), requests, 1)
        penalty = entry_penalty(requests, self.policy) if self.use_penalty else {}
        if queue.mode == USAGE_BASED and (penalty or self.full_usage):
            # What the rest of this pass sees: the entry penalty (Kueue), or with
            # ``inPassAccounting: FullUsage`` the whole request, so one pass spreads capacity.
            counted = requests if self.full_usage else penalty
            extra = sum(self.policy.resource_weight(r) * a for r, a in sorted(counted.items()) if a)
            for nid in (local.nid, *local.path[2:]):
                current = self.scoring.weighted.get(nid)
                if current is None:
                    current = weighted_usage(self.scoring.usage_state(nid), self.policy)
                self.scoring.weighted[nid] = current + extra
        borrowing = any(self.tree.is_borrowing(queue.name, fr) for fr in amounts)
        self.admissions.append(
            Admission(workload.key, local.spec.key, queue.name, frozen_map(assignment), frozen_map(penalty), borrowing)
        )
        queue.recent.pop(local.spec.key, None)
        queue.recent[local.spec.key] = chosen_with
        self._rescore(local, refresh=False)
        for item, _ in victims:
            self._rescore(self.locals[item.local_queue], refresh=True)
        recent = self.unit_recent.setdefault(queue.unit, {})
        recent.pop(queue.name, None)
        recent[queue.name] = queue_score

    def _rescore(self, local: LocalState, refresh: bool) -> None:
        """Recompute the scores on a LocalQueue's path after its allocation or usage changed.

        With ``refresh`` the fair tree re-ranks from the deepest node of the path it holds (the
        caller refreshes itself when it is about to anyway).
        """
        key = local.spec.key
        queue = local.queue
        self.scoring.local_scores[key], self.scoring.local_ties[key] = self.scoring.local_score(local)
        leaf = self.fair_tree.lq_nodes.get(key)
        if leaf is not None and leaf.use_score:
            leaf.score, leaf.tie = self.scoring.local_scores[key], self.scoring.local_ties[key]
        ns_node = self.fair_tree.ns_nodes.get(local.ns_nid)
        if ns_node is not None and ns_node.use_score:
            ns_node.score, ns_node.tie = self.scoring.namespace_score(local.ns_nid, local.namespace, queue.mode)
        cq_node = queue.node
        if cq_node is not None and cq_node.use_score:
            cq_node.score, cq_node.tie = self.scoring.queue_score(queue)
        node = cq_node.parent if cq_node is not None else None
        while node is not None and node.kind == COHORT:
            if node.use_score:
                parent_name = self.cohorts[node.name].parent if node.name in self.cohorts else None
                scope = self.cohort_scopes.get(parent_name) if parent_name is not None else None
                if scope is not None:
                    node.score, node.tie = self.scoring.cohort_score(
                        node.name, scope.mode, self.scoring.capacity(scope)
                    )
            node = node.parent
        if refresh:
            start = leaf or ns_node or cq_node
            if start is not None:
                self.fair_tree.refresh(start, force=True)

    # --- reasons ----------------------------------------------------------------------------

    def _pending(
        self, workload: Workload, queue: QueueState, code: str, message: str, shortages: tuple[Shortage, ...] = ()
    ) -> None:
        if not self.reasons:
            return
        queue.position += 1
        queue.pending.append(
            PendingReason(workload.key, workload.local_queue, queue.name, code, message, queue.position, shortages)
        )

    def pending_quota(self, workload: Workload, local: LocalState, queue: QueueState, record: ClassFailure) -> None:
        if not self.reasons:
            return
        self._pending(workload, queue, *self._quota_reason(local, queue, record))

    def _quota_reason(
        self, local: LocalState, queue: QueueState, record: ClassFailure
    ) -> tuple[str, str, tuple[Shortage, ...]]:
        own = local.spec.key
        cached = record.messages.get(None) or record.messages.get(own)
        if cached is None:
            cached = self._quota_sentence(local, queue, record)
            record.messages[None if cached[0] == INSUFFICIENT_QUOTA else own] = cached
        return cached

    def _quota_sentence(
        self, local: LocalState, queue: QueueState, record: ClassFailure
    ) -> tuple[str, str, tuple[Shortage, ...]]:
        """InsufficientQuota, or WaitingForFairShare when the workload fitted at the start of the
        pass and a queue ahead of it in fair-share order took the room; with the shortages the
        sentence names (every short resource, dominant first)."""
        shortage = text.insufficient_quota(queue.name, record.failure)
        shortages = record.failure.shortages
        if record.fits_at_start and queue.scope.fair:
            own = local.spec.key
            for other, score in reversed(queue.recent.items()):
                if other != own:
                    return (
                        WAITING_FOR_FAIR_SHARE,
                        text.waiting_for_fair_share(
                            "LocalQueue",
                            other,
                            text.format_score(queue.mode, score),
                            own,
                            text.format_score(queue.mode, self.scoring.local_scores[own]),
                            shortage,
                        ),
                        shortages,
                    )
            if queue.scored_in_cohort:
                own_score = queue.node.score if queue.node is not None else 0.0
                for other, score in reversed(self.unit_recent.get(queue.unit, {}).items()):
                    if other != queue.name:
                        return (
                            WAITING_FOR_FAIR_SHARE,
                            text.waiting_for_fair_share(
                                "ClusterQueue",
                                other,
                                text.format_score(queue.mode, score),
                                queue.name,
                                text.format_score(queue.mode, own_score),
                                shortage,
                            ),
                            shortages,
                        )
        return INSUFFICIENT_QUOTA, shortage, shortages
