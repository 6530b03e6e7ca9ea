"""The fair tree of an admission pass: lazy heaps from the root down to LocalQueue leaves.

Every node keeps a heap of its children's keys ``(group, score, best candidate's order, leaf)``;
a key is pushed again whenever it changes and stale entries are dropped when seen (versions),
so re-ranking after an admission costs O(depth x log(children)).

An object the planner builds over its pass state and calls: it reads that state (``locals``,
``queues``, ``by_local``, ``reasons``, ``tree``) through ``state`` and the scores through
``scoring``, and keeps the tree's nodes and the memo of candidates' borrowing profiles.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping

from fairshare.admission.pass_state import (
    CLUSTER_QUEUE,
    COHORT,
    LOCAL_QUEUE,
    QUEUE_NAMESPACE,
    ROOT,
    LocalState,
    PassState,
    QueueState,
    TreeNode,
)
from fairshare.admission.scoring import Scoring
from fairshare.policy import BORROWING_SHARE
from fairshare.quota.quota import QuotaTree, flavor_amounts
from fairshare.types import (
    DOMINANT_RESOURCE_SHARE,
    TIME_AWARE,
    Workload,
    node_id,
)

_UNPLACED = 1  # group of a candidate with no flavor assignment (or none left): ranked with the borrowers


class Profile:
    """A candidate's borrowing along its path (ClusterQueue first), with its flavors assigned.

    Flavors: the first in which the candidate fits its ClusterQueue's nominal quota, else the
    first that fits at all. ``borrows[i]``: 1 when the node at level ``i`` would borrow from its
    parent on one of the candidate's flavor-resources; ``borrowed[i]``: ``(parent,
    {flavor-resource: amount})`` of everything that node would borrow; ``height``: Kueue's
    classical borrowing height (0 within the ClusterQueue's nominal quota).
    """

    __slots__ = ("borrowed", "borrows", "height")

    def __init__(self, tree: QuotaTree, queue: str, requests: Mapping[str, int], cluster: str = "") -> None:
        nominal = tree.nominal_assignment(queue, requests, cluster)
        # A candidate within its nominal quota keeps those flavors even when the cohort lent the
        # room away (reclaim may give it back): Kueue assigns it in preemption mode, not borrowing.
        assignment = nominal or tree.assign(queue, requests, cluster)[0]
        if assignment is None:  # does not fit at all (its visit fails or preempts): with the borrowers
            self.borrows: list[int] = []
            self.borrowed: list = []
            self.height = _UNPLACED
            return
        amounts = flavor_amounts(requests, assignment)
        self.borrowed = tree.borrowed_path(queue, amounts)
        self.borrows = [int(any(fr in borrowed for fr in amounts)) for _, borrowed in self.borrowed]
        height = 0
        while height < len(self.borrows) and self.borrows[height]:
            height += 1
        self.height = 0 if nominal is not None else max(1, height)


class FairTree:
    """Building, ranking and walking the fair tree of one pass."""

    def __init__(self, state: PassState, scoring: Scoring) -> None:
        self.state = state
        self.scoring = scoring
        self._seq = 0
        self.profiles: dict[tuple[str, object], tuple[int, Profile]] = {}  # memo of ``_profile``

    def _new_node(self, kind: str, name: str, nid: str) -> TreeNode:
        self._seq += 1
        node = TreeNode(kind, name, nid, self._seq)
        self.nodes.append(node)
        return node

    def dismantle(self) -> None:
        """Break the tree's reference cycles so the pass is freed at once, without the collector."""
        for node in self.nodes:
            node.parent = None
            node.heap = []
            node.key = None
            node.cq = None
            node.lq = None
        for queue in self.state.queues.values():
            queue.node = None
            queue.leaves = []

    def build(self) -> None:
        self.nodes: list[TreeNode] = []
        self.root = self._new_node(ROOT, "", "root")
        self.lq_nodes: dict[str, TreeNode] = {}
        self.ns_nodes: dict[str, TreeNode] = {}
        self.cohort_nodes: dict[str, TreeNode] = {}

        for key in sorted(self.state.by_local):
            local = self.state.locals[key]
            queue = local.queue
            if queue.node is None:
                cq_node = queue.node = self._new_node(CLUSTER_QUEUE, queue.name, node_id(CLUSTER_QUEUE, queue.name))
                cq_node.cq = queue
                cohort = queue.spec.cohort
                cq_node.parent = self._cohort_node(cohort) if cohort is not None else self.root
                cq_node.grouped = cohort is not None and not (queue.scored_in_cohort and queue.mode == TIME_AWARE)
                cq_node.fair_parent = queue.scored_in_cohort
                cq_node.weight = queue.spec.weight
                if queue.scored_in_cohort:
                    cq_node.use_score = True
                    cq_node.score, cq_node.tie = self.scoring.queue_score(queue)
                    cq_node.borrowing_score = self._borrowing_mode(queue.mode)
            parent = queue.node
            if queue.scope.fair:  # the namespace level only matters where scores do
                ns_node = self.ns_nodes.get(local.ns_nid)
                if ns_node is None:
                    ns_node = self.ns_nodes[local.ns_nid] = self._new_node(
                        QUEUE_NAMESPACE, local.spec.namespace, local.ns_nid
                    )
                    ns_node.parent = queue.node
                    ns_node.cq = queue
                    ns_node.use_score = True
                    ns_node.score, ns_node.tie = self.scoring.namespace_score(local.ns_nid, local.namespace, queue.mode)
                parent = ns_node
            lq_node = self.lq_nodes[key] = self._new_node(LOCAL_QUEUE, key, local.nid)
            lq_node.parent = parent
            lq_node.cq = queue
            lq_node.lq = local
            if self.state.reasons:
                lq_node.items = self.state.by_local[key]
            else:
                lq_node.classes = [[per_class, 0, cls] for cls, per_class in self.state.by_local[key].items()]
                lq_node.heads = [(entry[0][0].order, slot) for slot, entry in enumerate(lq_node.classes)]
                heapq.heapify(lq_node.heads)
            queue.leaves.append(lq_node)
            if queue.scope.fair:
                lq_node.use_score = True
                lq_node.score = self.scoring.local_scores[key]
                lq_node.tie = self.scoring.local_ties[key]
        # Bottom-up initial keys: leaves first, then every level once.
        for lq_node in self.lq_nodes.values():
            self.refresh(lq_node, force=True)
        for queue in self.state.queues.values():
            if queue.node is not None and queue.live == 0:
                self.state.park(queue)

    def _cohort_node(self, name: str) -> TreeNode:
        """The fair-tree node of a cohort, created with its ancestors on first use."""
        node = self.cohort_nodes.get(name)
        if node is not None:
            return node
        node = self.cohort_nodes[name] = self._new_node(COHORT, name, node_id(COHORT, name))
        parent_name = self.state.cohorts[name].parent if name in self.state.cohorts else None
        node.parent = self._cohort_node(parent_name) if parent_name is not None else self.root
        node.weight = self.state.cohorts[name].weight if name in self.state.cohorts else 1.0
        if parent_name is not None:
            parent_scope = self.state.cohort_scopes.get(parent_name)
            node.grouped = parent_scope is None or parent_scope.mode != TIME_AWARE
            if parent_scope is not None and parent_scope.fair:
                node.fair_parent = True
                node.use_score = True
                node.score, node.tie = self.scoring.cohort_score(
                    name, parent_scope.mode, self.scoring.capacity(parent_scope)
                )
                node.borrowing_score = self._borrowing_mode(parent_scope.mode)
        return node

    def _borrowing_mode(self, mode: str) -> bool:
        return mode == DOMINANT_RESOURCE_SHARE and self.state.policy.cohort_dominant_share == BORROWING_SHARE

    def key(self, node: TreeNode) -> tuple | None:
        """The node's key in its parent's heap: ``(group, score, tie, best order, leaf)``."""
        if node.kind == LOCAL_QUEUE:
            head = self.head(node)
            if head is None:
                return None
            if node.use_score:
                return (0, node.score, node.tie, head.order, node)
            return (0, 0.0, 0.0, head.order, node)
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
            leaf = child_key[4]
            score, tie = (node.score, node.tie) if node.use_score else (0.0, 0.0)
            group = 0
            if node.grouped:
                head = self.head(leaf)
                if head is None:  # its remaining classes failed since its key was computed
                    group = _UNPLACED
                else:
                    queue = leaf.cq
                    level = queue.levels[node.nid]
                    if level == 0 and not node.borrowing_score and (node.fair_parent or len(queue.path) == 2):
                        # The ClusterQueue's own level, its cohort a root or the order fair: all
                        # that counts is whether it fits its nominal quota (the common case, cheap).
                        group = 0 if self._within_nominal(queue, head, leaf.head_cls) else 1
                        return (group, score, tie, child_key[3], leaf)
                    profile = self._profile(queue, head, leaf.head_cls)
                    if node.fair_parent:
                        group = profile.borrows[level] if level < len(profile.borrows) else _UNPLACED
                        if node.borrowing_score and level < len(profile.borrowed):
                            parent, borrowed = profile.borrowed[level]
                            score, tie = self.scoring.share_of(borrowed, parent, node.weight)
                    else:
                        group = profile.height
            return (group, score, tie, child_key[3], leaf)
        return None

    def _within_nominal(self, queue: QueueState, head: Workload, cls: object) -> bool:
        """Whether the candidate fits its ClusterQueue's nominal quota, memoised per class until
        that ClusterQueue's usage changes."""
        if cls is None:
            return self.state.tree.within_nominal(queue.name, head.requests, head.bound_cluster)
        memo = queue.nominal_memo
        found = memo.get(cls)
        if found is None:
            found = memo[cls] = self.state.tree.within_nominal(queue.name, head.requests, head.bound_cluster)
        return found

    def _profile(self, queue: QueueState, head: Workload, cls: object) -> Profile:
        """How the candidate would borrow at each level of its path, memoised per class until
        the quota tree changes."""
        memo_key = (queue.name, cls)
        if cls is not None:
            found = self.profiles.get(memo_key)
            if found is not None and found[0] == self.state.tree_version:
                return found[1]
        profile = Profile(self.state.tree, queue.name, head.requests, head.bound_cluster)
        if cls is not None:
            self.profiles[memo_key] = (self.state.tree_version, profile)
        return profile

    def head(self, leaf: TreeNode) -> Workload | None:
        """The leaf's next live candidate (its class in ``leaf.head_cls``), or None.

        Candidates of a class that already failed are dismissed as soon as they reach the head of
        their LocalQueue: their visit could only fail them, and skipping them keeps the order of
        the live candidates the same with and without reasons. With reasons they get their
        pending reason (and position) at that moment; without, whole classes drop at once.
        """
        if self.state.reasons:
            items = leaf.items
            local: LocalState = leaf.lq  # type: ignore[assignment]
            queue = local.queue
            failed = queue.failed
            blocked = local.block is not None or queue.blocked is not None
            class_of = local.class_of
            while leaf.idx < len(items):
                workload = items[leaf.idx]
                if blocked:
                    leaf.head_cls = None
                    return workload
                cls = class_of(workload)
                record = failed.get(cls)
                if record is None:
                    leaf.head_cls = cls
                    return workload
                leaf.idx += 1
                queue.counts[cls] -= 1
                self.state.pending_quota(workload, local, queue, record)
            return None
        heads = leaf.heads
        failed = leaf.cq.failed  # type: ignore[union-attr]
        classes = leaf.classes
        while heads:
            entry = classes[heads[0][1]]
            if entry[2] in failed:
                heapq.heappop(heads)
                continue
            leaf.head_cls = entry[2]
            return entry[0][entry[1]]
        return None

    def pop(self, leaf: TreeNode) -> Workload:
        """Take the head ``head`` just returned."""
        if self.state.reasons:
            workload = leaf.items[leaf.idx]
            leaf.idx += 1
            return workload
        _, slot = heapq.heappop(leaf.heads)
        entry = leaf.classes[slot]
        items, index = entry[0], entry[1]
        workload = items[index]
        index += 1
        entry[1] = index
        if index < len(items):
            heapq.heappush(leaf.heads, (items[index].order, slot))
        return workload

    def refresh(self, node: TreeNode, stop_at: TreeNode | None = None, force: bool = False) -> None:
        """Recompute keys from ``node`` up to (not including) ``stop_at``, pushing changes to parents."""
        while node is not stop_at and node is not None:
            new_key = self.key(node)
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
