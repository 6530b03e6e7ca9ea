"""Who may be preempted for whom in an admission pass (victim search is in ``preemption``).

Within a ClusterQueue (``withinClusterQueue``), reclaim within the cohort
(``reclaimWithinCohort``), and TimeAware reclaim by a queue below its fair share.

A mixin of the planner's ``_Planner``: it reads and changes the pass state (``running``,
``tree``, ``alloc``, ``shares``, ``local_scores``) through the planner's ``_take``/``_release``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from queues.engine.pass_state import (
    CLUSTER_QUEUE,
    LOCAL_QUEUE,
    LocalState,
    QueueState,
)
from queues.engine.preemption import Running, find_victims, may_preempt
from queues.engine.quota import flavor_amounts
from queues.engine.ranking import fair_share_ratio
from queues.engine.types import (
    PREEMPT_ANY,
    PREEMPT_NEVER,
    TIME_AWARE,
    USAGE_BASED,
    Workload,
    node_id,
)


class PreemptionRules:
    """The opted-in preemption rules of one pass."""

    def _preempt(
        self, workload: Workload, local: LocalState, queue: QueueState
    ) -> tuple[dict[str, str], list[tuple[Running, str]]] | None:
        """Try the opted-in preemption rules in turn; the first that makes room wins.

        Most attempts find nobody eligible, so candidate lists come first and the search only
        runs over a non-empty one.
        """
        preemption = queue.spec.preemption
        requests = workload.requests
        tree = self.tree
        attempts: list[tuple[list[Running], Callable[[], dict[str, str] | None], Any, str]] = []

        wanted = requests.keys()

        def overlaps(item: Running) -> bool:
            return not wanted.isdisjoint(item.workload.requests)

        def fits() -> dict[str, str] | None:
            return tree.assign(queue.name, requests)[0]

        within = preemption.within_cluster_queue
        if within != PREEMPT_NEVER:
            candidates = [
                item
                for item in self.running[queue.name].values()
                if may_preempt(within, workload, item.workload) and overlaps(item)
            ]
            if candidates:
                scores = self.local_scores
                candidates.sort(
                    key=lambda item: (
                        -scores.get(item.local_queue, 0.0),
                        item.workload.priority,
                        -item.admitted_at,
                        item.workload.key,
                    )
                )
                attempts.append((candidates, fits, None, f"to make room in ClusterQueue {queue.name}"))
        reclaim = preemption.reclaim_within_cohort
        if reclaim != PREEMPT_NEVER and queue.spec.cohort is not None and tree.within_nominal(queue.name, requests):
            candidates = [
                item
                for other in self.unit_queues[queue.unit]
                if other != queue.name
                for item in self.running[other].values()
                if (reclaim == PREEMPT_ANY or item.workload.priority < workload.priority) and overlaps(item)
            ]
            if candidates:
                candidates.sort(key=lambda item: (item.workload.priority, -item.admitted_at, item.workload.key))
                self._usage_first_within_queues(candidates)

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

                attempts.append(
                    (candidates, fits_nominal, borrowing, f"to reclaim the nominal quota of ClusterQueue {queue.name}")
                )
        if queue.mode == TIME_AWARE:
            attempts.extend(self._time_aware_attempts(workload, local, queue, fits, overlaps))
        if not attempts:
            return None

        def release(item: Running) -> None:
            self._release(item, self._victim_path(item))

        def restore(item: Running) -> None:
            self._take(item, self._victim_path(item))

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

    def _usage_first_within_queues(self, candidates: list[Running]) -> None:
        """Kueue's CandidatesOrdering compares LocalQueue usage only between workloads of one
        ClusterQueue: in the places a usage-based ClusterQueue's victims hold in the priority
        order, they are reordered so the LocalQueue with the higher usage score loses first."""
        slots: dict[str, list[int]] = {}
        for index, item in enumerate(candidates):
            if self.queues[item.cluster_queue].mode == USAGE_BASED:
                slots.setdefault(item.cluster_queue, []).append(index)
        scores = self.local_scores
        for positions in slots.values():
            items = sorted(
                (candidates[i] for i in positions),
                key=lambda item: (
                    -scores.get(item.local_queue, 0.0),
                    item.workload.priority,
                    -item.admitted_at,
                    item.workload.key,
                ),
            )
            for index, item in zip(positions, items, strict=True):
                candidates[index] = item

    def _time_aware_attempts(self, workload: Workload, local: LocalState, queue: QueueState, fits, overlaps) -> list:
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
        cq_nid = node_id(CLUSTER_QUEUE, queue.name)
        if reclaim != PREEMPT_NEVER and queue.scored_in_cohort and within_share(cq_nid):
            candidates = [
                item
                for other in self.unit_queues[queue.unit]
                if other != queue.name
                and self.queues[other].scope == queue.scope
                and over_share(node_id(CLUSTER_QUEUE, other))
                for item in self.running[other].values()
                if overlaps(item) and (reclaim == PREEMPT_ANY or item.workload.priority < workload.priority)
            ]
            candidates.sort(
                key=lambda item: (
                    -self._over_share_ratio(node_id(CLUSTER_QUEUE, item.cluster_queue)),
                    item.workload.priority,
                    -item.admitted_at,
                    item.workload.key,
                )
            )
            attempts.append(
                (
                    candidates,
                    fits,
                    lambda item: over_share(node_id(CLUSTER_QUEUE, item.cluster_queue)),
                    f"to give ClusterQueue {queue.name} its fair share (TimeAware)",
                )
            )
        within = preemption.within_cluster_queue
        if within != PREEMPT_NEVER and within_share(local.nid):
            candidates = [
                item
                for item in self.running[queue.name].values()
                if item.local_queue != local.spec.key
                and over_share(node_id(LOCAL_QUEUE, item.local_queue))
                and overlaps(item)
                and may_preempt(within, workload, item.workload)
            ]
            candidates.sort(
                key=lambda item: (
                    -self._over_share_ratio(node_id(LOCAL_QUEUE, item.local_queue)),
                    item.workload.priority,
                    -item.admitted_at,
                    item.workload.key,
                )
            )
            attempts.append(
                (
                    candidates,
                    fits,
                    lambda item: over_share(node_id(LOCAL_QUEUE, item.local_queue)),
                    f"to give LocalQueue {local.spec.key} its fair share (TimeAware)",
                )
            )
        return attempts

    def _over_share_ratio(self, nid: str) -> float:
        return fair_share_ratio(self.alloc.get(nid, {}), self.shares.get(nid, {}), self.alloc.get(nid, {}))

    def _victim_path(self, item: Running) -> tuple[str, ...]:
        local = self.locals[item.local_queue]
        if item.cluster_queue == local.queue.name:
            return local.path
        return self._path_in(local, item.cluster_queue)
