"""Who may be preempted for whom in an admission pass (victim search is in ``preemption``).

Within a ClusterQueue (``withinClusterQueue``), reclaim within the cohort
(``reclaimWithinCohort``), and TimeAware reclaim by a queue below its fair share.

An object the planner builds over its pass state and calls: it reads and changes that state
(``running``, ``tree``, ``alloc``, ``shares``) through ``state`` and its ``take``/``release``,
and reads the scores through ``scoring``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from fairshare.admission.pass_state import (
    CLUSTER_QUEUE,
    LOCAL_QUEUE,
    LocalState,
    PassState,
    QueueState,
)
from fairshare.admission.ranking import dominant_share, fair_share_ratio
from fairshare.admission.scoring import Scoring
from fairshare.preemption.preemption import Running, find_victims, may_preempt
from fairshare.quota.quota import flavor_amounts
from fairshare.types import (
    PREEMPT_ANY,
    PREEMPT_EXCEED_WEIGHT,
    PREEMPT_NEVER,
    TIME_AWARE,
    USAGE_BASED,
    Workload,
    node_id,
)

_EPSILON = 1e-9  # shares are float ratios: equal within rounding counts as equal


if TYPE_CHECKING:
    # Returns the assignment when the workload fits (after the victims chosen so far are gone).
    Fits = Callable[[], dict[str, str] | None]
    # Candidates in eviction order, the fit check, whether a candidate is still eligible, the rule.
    Attempt = tuple[list[Running], Fits, Callable[[Running], bool] | None, str]


class PreemptionRules:
    """The opted-in preemption rules of one pass."""

    def __init__(self, state: PassState, scoring: Scoring) -> None:
        self.state = state
        self.scoring = scoring

    def preempt(
        self, workload: Workload, local: LocalState, queue: QueueState
    ) -> tuple[dict[str, str], list[tuple[Running, str]]] | None:
        """Try the opted-in preemption rules in turn; the first that makes room wins.

        Most attempts find nobody eligible, so candidate lists come first and the search only
        runs over a non-empty one.
        """
        preemption = queue.spec.preemption
        requests = workload.requests
        tree = self.state.tree
        attempts: list[Attempt] = []

        wanted = requests.keys()
        bound = workload.bound_cluster
        on_cluster = tree.flavor_clusters

        def overlaps(item: Running) -> bool:
            # A bound preemptor can only use room on its own cluster: victims elsewhere free none.
            return not wanted.isdisjoint(item.workload.requests) and (
                not bound or any(on_cluster.get(flavor) == bound for flavor, _ in item.amounts)
            )

        def fits() -> dict[str, str] | None:
            return tree.assign(queue.name, requests, bound)[0]

        within = preemption.within_cluster_queue
        if within == PREEMPT_EXCEED_WEIGHT:
            attempts.extend(self._exceed_weight_attempts(workload, local, queue, fits, overlaps))
        elif within != PREEMPT_NEVER:
            candidates = [
                item
                for item in self.state.running[queue.name].values()
                if may_preempt(within, workload, item.workload) and overlaps(item)
            ]
            if candidates:
                scores = self.scoring.local_scores
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
        if (
            reclaim != PREEMPT_NEVER
            and queue.spec.cohort is not None
            and tree.within_nominal(queue.name, requests, bound)
        ):
            candidates = [
                item
                for other in self.state.unit_queues[queue.unit]
                if other != queue.name
                for item in self.state.running[other].values()
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
            self.state.release(item, self._victim_path(item))

        def restore(item: Running) -> None:
            self.state.take(item, self._victim_path(item))

        for candidates, check, still_eligible, rule in attempts:
            if not candidates:
                continue
            found = find_victims(candidates, check, release, restore, still_eligible)
            if found is not None:
                assignment, chosen = found
                for item in chosen:
                    del self.state.running[item.cluster_queue][item.workload.key]
                return assignment, [(item, rule) for item in chosen]
        return None

    def _exceed_weight_attempts(
        self, workload: Workload, local: LocalState, queue: QueueState, fits: Fits, overlaps: Callable[[Running], bool]
    ) -> list[Attempt]:
        """KEP-752 ``ExceedWeight``: a LocalQueue that stays within its weight's share of the
        ClusterQueue with this workload admitted may evict workloads of LocalQueues above theirs.

        A LocalQueue's share is its dominant share of what the ClusterQueue can reach (nominal
        plus what it may borrow); its weight's share is ``weight / sum of weights`` over the
        LocalQueues with admitted or pending work in the ClusterQueue (weights are LocalQueue x
        namespace weight, as in the fair tree). Victims go from the most exceeding LocalQueue
        first, then lower priority, then most recently admitted; a LocalQueue stops being a
        target once it is back within its share. Priority does not protect a victim: the rule
        is about shares.
        """
        reach = self.state.reaches.get(queue.name)
        if reach is None:
            reach = self.state.reaches[queue.name] = self.state.tree.queue_reach(queue.name)
        running = self.state.running[queue.name]
        active = {item.local_queue for item in running.values()} | {
            key for key in self.state.by_local if self.state.locals[key].queue is queue
        }
        active.add(local.spec.key)

        def weight_of(key: str) -> float:
            lq = self.state.locals[key]
            return max(0.0, lq.spec.weight) * max(0.0, lq.namespace.weight)

        total = sum(weight_of(key) for key in active)
        if total <= 0:
            return []
        entitled = {key: weight_of(key) / total for key in active}

        def share(key: str, extra: Mapping[str, int] | None = None) -> float:
            alloc = self.state.alloc.get(self.state.locals[key].nid, {})
            if extra:
                alloc = {r: alloc.get(r, 0) + extra.get(r, 0) for r in {*alloc, *extra}}
            return dominant_share(alloc, reach)

        own = local.spec.key
        if share(own, workload.requests) > entitled[own] + _EPSILON:
            return []

        def exceeds(key: str) -> bool:
            return share(key) > entitled[key] + _EPSILON

        candidates = [
            item
            for item in running.values()
            if item.local_queue != own and exceeds(item.local_queue) and overlaps(item)
        ]
        excess = {key: share(key) / entitled[key] if entitled[key] > 0 else math.inf for key in active}
        candidates.sort(
            key=lambda item: (-excess[item.local_queue], item.workload.priority, -item.admitted_at, item.workload.key)
        )
        return [
            (
                candidates,
                fits,
                lambda item: exceeds(item.local_queue),
                f"to give LocalQueue {own} its weight's share of ClusterQueue {queue.name} (ExceedWeight)",
            )
        ]

    def preempt_for_namespace(
        self, workload: Workload, local: LocalState, queue: QueueState
    ) -> tuple[dict[str, str], list[tuple[Running, str]]] | None:
        """A workload over its namespace's hard quota evicts the namespace's own admitted
        workloads its ``withinNamespace`` policy allows (lower priority first, most recently
        admitted first), if that makes it fit both the namespace quota and its ClusterQueue."""
        namespace = local.namespace
        policy = namespace.within_namespace
        requests = workload.requests
        limited = [r for r in namespace.quota if requests.get(r, 0)]
        candidates = [
            item
            for running in self.state.running.values()
            for item in running.values()
            if item.namespace == namespace.name
            and may_preempt(policy, workload, item.workload)
            and any(item.workload.requests.get(r, 0) for r in limited)
        ]
        if not candidates:
            return None
        candidates.sort(key=lambda item: (item.workload.priority, -item.admitted_at, item.workload.key))
        tree = self.state.tree

        def fits() -> dict[str, str] | None:
            used = self.state.ns_used.get(namespace.name, {})
            if any(used.get(r, 0) + requests[r] > namespace.quota[r] for r in limited):
                return None
            return tree.assign(queue.name, requests, workload.bound_cluster)[0]

        def release(item: Running) -> None:
            self.state.release(item, self._victim_path(item))

        def restore(item: Running) -> None:
            self.state.take(item, self._victim_path(item))

        found = find_victims(candidates, fits, release, restore)
        if found is None:
            return None
        assignment, chosen = found
        for item in chosen:
            del self.state.running[item.cluster_queue][item.workload.key]
        rule = f"to fit namespace {namespace.name}'s quota ({policy})"
        return assignment, [(item, rule) for item in chosen]

    def _usage_first_within_queues(self, candidates: list[Running]) -> None:
        """Kueue's CandidatesOrdering compares LocalQueue usage only between workloads of one
        ClusterQueue: in the places a usage-based ClusterQueue's victims hold in the priority
        order, they are reordered so the LocalQueue with the higher usage score loses first."""
        slots: dict[str, list[int]] = {}
        for index, item in enumerate(candidates):
            if self.state.queues[item.cluster_queue].mode == USAGE_BASED:
                slots.setdefault(item.cluster_queue, []).append(index)
        scores = self.scoring.local_scores
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

    def _time_aware_attempts(
        self, workload: Workload, local: LocalState, queue: QueueState, fits: Fits, overlaps: Callable[[Running], bool]
    ) -> list[Attempt]:
        """KAI reclaim: a queue whose allocation plus this job stays within its fair share may evict
        workloads of sibling queues that are above theirs."""
        requests = workload.requests
        preemption = queue.spec.preemption
        attempts: list[Attempt] = []

        def within_share(nid: str) -> bool:
            share, alloc = self.state.shares.get(nid, {}), self.state.alloc.get(nid, {})
            return all(alloc.get(r, 0) + a <= share.get(r, 0) for r, a in requests.items() if a)

        def over_share(nid: str) -> bool:
            share, alloc = self.state.shares.get(nid, {}), self.state.alloc.get(nid, {})
            return any(alloc.get(r, 0) > share.get(r, 0) for r in requests if requests[r])

        def attempt(candidates: list[Running], node_of: Callable[[Running], str], reason: str) -> None:
            """Victims from the queue furthest over its share first, then lowest priority, newest."""
            candidates.sort(
                key=lambda item: (
                    -self._over_share_ratio(node_of(item)),
                    item.workload.priority,
                    -item.admitted_at,
                    item.workload.key,
                )
            )
            attempts.append((candidates, fits, lambda item: over_share(node_of(item)), reason))

        reclaim = preemption.reclaim_within_cohort
        cq_nid = node_id(CLUSTER_QUEUE, queue.name)
        if reclaim != PREEMPT_NEVER and queue.scored_in_cohort and within_share(cq_nid):
            candidates = [
                item
                for other in self.state.unit_queues[queue.unit]
                if other != queue.name
                and self.state.queues[other].scope == queue.scope
                and over_share(node_id(CLUSTER_QUEUE, other))
                for item in self.state.running[other].values()
                if overlaps(item) and (reclaim == PREEMPT_ANY or item.workload.priority < workload.priority)
            ]
            attempt(
                candidates,
                lambda item: node_id(CLUSTER_QUEUE, item.cluster_queue),
                f"to give ClusterQueue {queue.name} its fair share (TimeAware)",
            )
        within = preemption.within_cluster_queue
        if within != PREEMPT_NEVER and within_share(local.nid):
            candidates = [
                item
                for item in self.state.running[queue.name].values()
                if item.local_queue != local.spec.key
                and over_share(node_id(LOCAL_QUEUE, item.local_queue))
                and overlaps(item)
                and may_preempt(within, workload, item.workload)
            ]
            attempt(
                candidates,
                lambda item: node_id(LOCAL_QUEUE, item.local_queue),
                f"to give LocalQueue {local.spec.key} its fair share (TimeAware)",
            )
        return attempts

    def _over_share_ratio(self, nid: str) -> float:
        return fair_share_ratio(
            self.state.alloc.get(nid, {}), self.state.shares.get(nid, {}), self.state.alloc.get(nid, {})
        )

    def _victim_path(self, item: Running) -> tuple[str, ...]:
        local = self.state.locals[item.local_queue]
        if item.cluster_queue == local.queue.name:
            return local.path
        return self.state.path_in(local, item.cluster_queue)
