"""Discrete-event simulation of a scenario on the engine alone (no database, no Celery).

Events, in this order at equal times: finishes, submissions, budget renewals, budget checks,
the usage sample, ticks. After the events of a time step, if anything changed (a submission, a finish, a sample,
a hold), an admission pass runs (``planner.plan``); a pass that evicted something (preemption or
a drain) is followed at once by another one at the same time. A pass over an unchanged state
would decide nothing new, so it is skipped. Series are recorded at every tick.

Stepping (``stepping=``): ``"event"`` (the default) also skips every pass that provably
decides nothing (``_passes_are_monotone``, ``_pass_needed``: without preemption, StrictFIFO
and safe admission, a pass admits something exactly when a pending workload it would offer
fits now) and writes the series from what changed; ``"reference"`` runs every pass and
computes every series point afresh. Both give the same result, byte for byte
(``tests/fairshare/test_simulator_stepping.py``).

* Usage: every ``usageSamplingInterval`` each LocalQueue, namespace, ClusterQueue and cohort is
  sampled with ``usage.sample`` (decay and penalty folding); each admission adds its entry
  penalty to every node on its path at once.
* TimeAware history: each LocalQueue's allocation is kept as an exact step series; at every
  sample its windowed, decayed share of its scope's capacity is recomputed for the planner
  (event stepping: when first read, ``_LazyHistory``).
* Budgets: WallTime (hours of admitted wall time, summed over workloads) and ResourceHours
  (requests of one resource, optionally one flavor, times time) are integrated exactly; when
  one is used up its target is held (``Hold``) or held and drained (``HoldAndDrain``): events
  ``held`` and ``evicted``. A budget with ``renewal`` (weekly, or every ``renewalDays``) starts
  each period at zero, counted from t=0 (or from ``firstRenewalAt``, when the run starts
  mid-period with ``usedHours`` already used); a ``monthly`` one renews on the calendar, from
  its ``anchor`` (default ``clock.start``) on ``clock.timeZone``'s wall clock: a workload
  running across the boundary charges each period its part, and a hold placed by the budget is
  lifted (event ``resumed``).
  ``summary.budgets`` reports each budget's use in its last period and when it ran out.
  Opt-in safe admission (a budget's ``safeAdmission``): a pending workload whose ``maxRuntime``
  could overrun what is left waits, reason ``BudgetInsufficient``, as the live gate decides.
  The arithmetic (charges, exhaustion, action, worst case) is ``fairshare.usage.budgets``.
* An evicted (preempted or drained) workload goes back to pending with its original queue
  timestamp and, when admitted again, runs its full duration again.
* Contention: a resource is *contended* while at least one workload requesting it is still
  pending after the admission passes of a moment in a LocalQueue that is not stopped or held
  (it could not be admitted for want of quota or its turn; work a budget holds does not count).
  ``summary.contention`` gives the intervals in which some resource was (``[start, end)``,
  seconds), and per resource the contended seconds and the utilisation averaged over them alone,
  so a long, mostly idle replay does not hide how full the cluster was while work waited.
* Clusters (a scenario that lists ``clusters``): a cluster's ``unavailable`` window puts its
  flavors in ``Snapshot.unavailable_flavors`` from ``from`` until ``until`` (events
  ``clusterDown``/``clusterUp``; a pass follows each): nothing is admitted onto them meanwhile,
  work running there goes on. ``summary.clusters`` breaks the run down per cluster: its flavors,
  its capacity (nominal quota of ClusterQueues and cohorts on its flavors), utilisation (the
  allocation on its flavors averaged over the run, over that capacity), the workloads admitted
  onto it at least once, the waits (p50/p95, all pending time) of the workloads whose last
  admission placed them on it (a workload spanning two clusters' flavors counts on both;
  pending work at the end is on none) and the seconds it was unavailable.
* Time: with a horizon the run stops at the horizon (``0s``: exactly the admission pass at
  t=0); without one it stops when nothing runs and nothing is left to arrive.
"""

from __future__ import annotations

import gc
import heapq
import math
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping, Set
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, cast

from fairshare.admission.candidates import PendingIndex
from fairshare.admission.pass_state import CLUSTER_QUEUE, COHORT, LocalState, QueueState
from fairshare.admission.planner import plan, scope_capacities
from fairshare.admission.reasons import shortage_json
from fairshare.admission.scoring import Scoring, ShareLayout
from fairshare.errors import ValidationError
from fairshare.policy import FairSharingPolicy
from fairshare.quantities import to_base_units
from fairshare.quota.quota import FlavorResource, QuotaTree, flavor_amounts
from fairshare.quota.scopes import cohort_chains, queue_chain, queue_scope
from fairshare.simulation.calendar import monthly_boundaries
from fairshare.simulation.scenario import BudgetSpec, Scenario, WorkloadSpec
from fairshare.types import (
    BUDGET_EXHAUSTED,
    BUDGET_INSUFFICIENT,
    PREEMPT_NEVER,
    PREEMPTED,
    STOP_HOLD_AND_DRAIN,
    STOP_NONE,
    STRICT_FIFO,
    TIME_AWARE,
    ClusterQueue,
    Cohort,
    Hold,
    Namespace,
    PendingReason,
    Plan,
    Snapshot,
    UsageState,
    Workload,
    frozen_map,
    node_id,
)
from fairshare.usage import budgets as budget_rules
from fairshare.usage.accounting import all_nodes, node_paths
from fairshare.usage.usage import (
    add_penalty,
    decay_alpha,
    projected,
    prune_samples,
    sample,
    sorted_windowed_integral,
    window_start,
    windowed_share,
    windowed_usage,
)

_FINISH, _SUBMIT, _RENEW, _BUDGET, _SAMPLE, _TICK, _CLUSTER = range(7)
EVENT, REFERENCE = "event", "reference"
STEPPINGS = (EVENT, REFERENCE)
_MAX_PASSES_PER_STEP = 2
_BUDGET_SLACK_HOURS = 1e-9  # budgets integrate float hours: a crossing predicted to the last bit counts

_NOTHING: Mapping[str, float] = frozen_map(None)

Progress = Callable[[float], None]
"""Called with the fraction done (0..1), at most once per percent and once more with 1.0."""


@dataclass(slots=True)
class _Job:
    spec: WorkloadSpec
    pending: Workload
    state: str = "NotSubmitted"
    admitted: Workload | None = None
    admitted_at: float | None = None
    finished_at: float | None = None
    pending_since: float = 0.0
    wait: float = 0.0
    evictions: int = 0
    token: int = 0
    path: tuple[str, ...] = ()
    reason: Any = None
    amounts: dict[FlavorResource, int] = field(default_factory=dict)  # on the quota tree while admitted


@dataclass(slots=True)
class _Budget:
    spec: BudgetSpec
    used_hours: float = 0.0
    rate: float = 0.0  # hours per second
    since: float = 0.0
    held: bool = False
    hold: Hold | None = None
    period: int = 0
    exhausted_at: list[float] = field(default_factory=list)
    renewals: Iterator[float] | None = None  # monthly: seconds from t=0 of the next renewals
    next_renewal: float | None = None  # when the current period ends (None: it does not)


@dataclass(slots=True)
class _Room:
    """What a safe-admission budget can still promise in this pass (unit-seconds)."""

    budget: _Budget
    available: float
    seconds_left: float | None  # until its period ends (None: it does not)


@dataclass(slots=True)
class _Integral:
    """Exact time integral of a step function, advanced at every change."""

    value: float = 0.0
    area: float = 0.0
    since: float = 0.0

    def set(self, value: float, now: float) -> None:
        self.area += self.value * (now - self.since)
        self.since = now
        self.value = value

    def total(self, now: float) -> float:
        return self.area + self.value * (now - self.since)


@dataclass(slots=True)
class _Series:
    t: list[float] = field(default_factory=list)
    allocation: dict[str, dict[str, list]] = field(default_factory=dict)
    usage: dict[str, dict[str, list]] = field(default_factory=dict)
    fair_share: dict[str, dict[str, list]] = field(default_factory=dict)


@dataclass(slots=True)
class _History:
    historical_usage: Mapping[str, Mapping[str, float]]


class _ShareState:
    """What ``Scoring.time_aware_shares`` reads of a pass (``pass_state.PassState``), built as the
    planner builds it, for the fair shares alone (the quota tree's nominal quota, no usage)."""

    def __init__(self, scenario: Scenario) -> None:
        self.policy = scenario.policy
        self.cohorts: dict[str, Cohort] = {c.name: c for c in scenario.cohorts}
        chains = cohort_chains(self.cohorts)
        self.queues: dict[str, QueueState] = {}
        for spec in scenario.cluster_queues:
            chain = queue_chain(spec, chains)
            unit = node_id(COHORT, chain[-1]) if chain else node_id(CLUSTER_QUEUE, spec.name)
            path = (node_id(CLUSTER_QUEUE, spec.name), *(node_id(COHORT, c) for c in chain))
            self.queues[spec.name] = QueueState(spec, queue_scope(spec, self.cohorts, chains), unit, path)
        self.namespaces: dict[str, Namespace] = {n.name: n for n in scenario.namespaces}
        self.locals: dict[str, LocalState] = {}
        for local in scenario.local_queues:
            namespace = self.namespaces.setdefault(local.namespace, Namespace(local.namespace))
            self.locals[local.key] = LocalState(local, self.queues[local.cluster_queue], namespace)
        self.tree = QuotaTree(scenario.cohorts, scenario.cluster_queues)
        self.alloc: dict[str, dict[str, int]] = {}
        self.demand: dict[str, dict[str, int]] = {}
        self.shares: dict[str, dict[str, int]] = {}
        self.ta_demand: dict[str, Mapping[str, float]] = {}
        self.snapshot = _History(frozen_map(None))


class _LazyHistory(Mapping[str, Mapping[str, float]]):
    """``Snapshot.historical_usage`` at one sample (time ``t``): each LocalQueue's windowed
    shares, as the reference computes them (``windowed_share`` per resource, the same
    arithmetic in the same order), computed on first read and kept. It holds the step series
    (``Simulation.steps``), not the simulation (no reference cycle: runs pause the collector);
    valid until the next sample prunes them (the simulation replaces it then).

    Read after ``t`` too: steps added since start at ``t`` or later, so with ``now = t`` they
    are empty segments (each adds +0.0: nothing), and a queue whose amounts were all 0 at ``t``
    still gets 0.0. A resource first seen after ``t`` is left out, as at ``t``."""

    def __init__(
        self,
        steps: Mapping[str, Mapping[str, tuple[list[float], list[float]]]],
        capacity: Mapping[str, Mapping[str, int]],
        policy: FairSharingPolicy,
        t: float,
    ) -> None:
        self._steps = steps
        self._capacity = capacity
        window = policy.usage_window
        self._window = (window.size_seconds, window.type, policy.usage_half_life_seconds)
        self._t = t
        self._resources = {key: len(per_resource) for key, per_resource in steps.items()}
        self._values: dict[str, Mapping[str, float]] = {}
        self._capacities: dict[float, float] = {}  # windowed capacity per distinct amount

    def __getitem__(self, key: str) -> Mapping[str, float]:
        value = self._values.get(key)
        if value is None:
            value = self._values[key] = self._compute(key)
        return value

    def _compute(self, key: str) -> Mapping[str, float]:
        resources = self._resources[key]  # KeyError: not a LocalQueue
        size, kind, half_life = self._window
        t, capacities = self._t, self._capacities
        capacity = self._capacity.get(key, {})
        shares: dict[str, float] = {}
        for resource, (times, amounts) in islice(self._steps[key].items(), resources):
            amount = float(capacity.get(resource, 0))
            windowed = capacities.get(amount)
            if windowed is None:
                windowed = capacities[amount] = windowed_usage([(0.0, amount)], t, size, kind, half_life)
            if windowed <= 0 or not any(amounts):
                shares[resource] = 0.0
            else:
                shares[resource] = sorted_windowed_integral(times, amounts, t, size, kind, half_life) / windowed
        return frozen_map(shares)

    def __iter__(self) -> Iterator[str]:
        return iter(self._resources)

    def __len__(self) -> int:
        return len(self._resources)


class Simulation:
    """One run of a scenario; ``run()`` returns the JSON-ready result of the contract."""

    def __init__(self, scenario: Scenario, *, stepping: str = EVENT) -> None:
        if stepping not in STEPPINGS:
            raise ValueError(f"stepping is one of {', '.join(STEPPINGS)}, got {stepping[:20]!r}")
        self.reference = stepping == REFERENCE
        self.scenario = scenario
        self.policy = scenario.policy
        self.horizon = scenario.clock.horizon_seconds
        self.tick = scenario.clock.tick_seconds
        specs = scenario.all_workloads()
        if self.horizon is None and any(w.run_seconds is None for w in specs):
            raise ValidationError(
                "clock.horizon", "is required when a workload has no duration (it would never finish)"
            )
        self.locals = {lq.key: lq for lq in scenario.local_queues}
        self.queues = {q.name: q for q in scenario.cluster_queues}
        self.static = Snapshot(
            policy=self.policy,
            flavors=scenario.flavors,
            cohorts=scenario.cohorts,
            cluster_queues=scenario.cluster_queues,
            namespaces=scenario.namespaces,
            local_queues=scenario.local_queues,
        )
        self.paths = node_paths(self.static)
        self.index = PendingIndex(self.static)  # pending work as passes read it, kept up to date
        self.jobs: dict[str, _Job] = {}
        for spec in specs:
            workload = Workload(
                spec.name,
                spec.local_queue,
                spec.requests,
                spec.priority,
                float(spec.created_at),
                spec.pod_sets,
                priority_class=spec.priority_class,
            )
            self.jobs[spec.name] = _Job(spec, workload, path=self.paths[spec.local_queue])
        self.pending: dict[str, _Job] = {}
        self.running: dict[str, _Job] = {}
        # Usage states and the admitted usage they sample.
        node_ids = all_nodes(self.static)
        self.current: dict[str, dict[str, int]] = {nid: {} for nid in node_ids}
        self.states: dict[str, UsageState] = {nid: UsageState(last_update=0.0) for nid in node_ids}
        for key, usage in scenario.initial_usage.items():
            self.states[node_id("localQueue", key)] = UsageState(
                consumed=frozen_map({r: float(v) for r, v in usage.items()}), last_update=0.0
            )
        # Capacity and utilisation.
        self.capacity: dict[str, int] = {}
        owners: tuple[ClusterQueue | Cohort, ...] = (*scenario.cluster_queues, *scenario.cohorts)
        for owner in owners:
            for flavor_quotas in owner.quotas:
                for resource, quota in flavor_quotas.resources.items():
                    self.capacity[resource] = self.capacity.get(resource, 0) + quota.nominal
        self.total_alloc: dict[str, _Integral] = {}
        # Clusters: flavor -> cluster, the allocation per cluster and resource, outages.
        self.flavor_cluster = scenario.flavor_clusters
        self.cluster_alloc: dict[str, dict[str, _Integral]] = {c.name: {} for c in scenario.clusters}
        self.down: set[str] = set()
        self.unavailable: frozenset[str] = frozenset()
        # Contention (``_note_contention``): pending workloads per LocalQueue and resource they
        # request; per resource, contended time and the allocation integrated only then.
        self.waiting: dict[str, dict[str, int]] = {key: {} for key in self.locals}
        self.waiting_total: dict[str, int] = {}  # the same summed over LocalQueues
        self.contended: frozenset[str] = frozenset()
        self.contended_time: dict[str, _Integral] = {}
        self.contended_alloc: dict[str, _Integral] = {}
        self.contention_intervals: list[list[float]] = []
        self.lq_alloc: dict[str, dict[str, _Integral]] = {key: {} for key in self.locals}
        # TimeAware history.
        self.time_aware = any(q.admission_mode == TIME_AWARE for q in scenario.cluster_queues) or any(
            c.admission_mode == TIME_AWARE for c in scenario.cohorts
        )
        self.scope_capacity = scope_capacities(self.static) if self.time_aware else {}
        self.history: dict[str, dict[str, list[tuple[float, float]]]] = {key: {} for key in self.locals}
        # the same step series as two lists (times, amounts), for event stepping
        self.steps: dict[str, dict[str, tuple[list[float], list[float]]]] = {key: {} for key in self.locals}
        self.historical: Mapping[str, Mapping[str, float]] = {}
        self.fair_shares: Mapping[str, Mapping[str, int]] = {}
        # Budgets and holds.
        self.budgets = [_Budget(spec, used_hours=spec.used_hours) for spec in scenario.budgets]
        # Safe admission applies only where a budget asks for it and some workload declares a
        # maximum runtime: otherwise no gate runs and the passes are as before.
        self.safe_budgets = [b for b in self.budgets if b.spec.safe_admission]
        if not any(job.spec.max_runtime_seconds is not None for job in self.jobs.values()):
            self.safe_budgets = []
        self.holds: tuple[Hold, ...] = ()
        # Output.
        self.events: list[dict[str, Any]] = []
        self.series = _Series()
        self.series_resources = self._series_resources()
        self._heap: list[tuple] = []
        self._seq = 0
        self.last_plan: Plan | None = None
        # Event stepping: which passes can be skipped, and what the output needs meanwhile.
        self.skippable = not self.reference and self._passes_are_monotone()
        self.tree = QuotaTree(scenario.cohorts, scenario.cluster_queues) if self.skippable else None
        # ``_pass_needed``'s answers per (ClusterQueue, request shape) on the tree as it is:
        # cleared whenever the tree changes (an admission, a release, a cluster down or up)
        self._fits: dict[tuple[str, str], bool] = {}
        self._stopped, self._drained = self._stop_policies()
        self._ns_quota = {n.name: n.quota for n in scenario.namespaces if n.quota}
        self.passes = 0  # admission passes run
        self.skipped = 0  # passes skipped (they would have decided nothing)
        self._shares_stale = False
        share_state = _ShareState(scenario) if self.time_aware and not self.reference else None
        self._share_state = share_state if self.skippable else None
        # Event stepping: the fair-share trees' shape, read once, for every pass and refresh
        # (``plan``'s ``share_layout``; the reference reads its own in every pass).
        self._layout = ShareLayout(cast(Any, share_state)) if share_state is not None else None
        self._pending_demand: dict[str, dict[str, int]] = {key: {} for key in self.locals}
        # Series (event stepping): ticks recorded; allocation and fair shares are written when
        # they change (and at the end) for the ticks they held, usage at every tick.
        self._ticks = 0
        self._rows: list[tuple[str, tuple[str, ...], list[list]]] | None = None
        self._alloc_lists: dict[str, list[list]] = {}
        self._alloc_since: dict[str, int] = {}
        self._share_rows: list[tuple[list, int | float]] = []
        self._share_since = 0
        self._shares_recorded: Mapping[str, Mapping[str, int]] | None = None
        self._share_values: list[tuple[str, str, int | float]] = []
        self._share_nids = [node_id("localQueue", key) for key in self.series_resources]
        self._shares_shown: list[Mapping[str, int] | None] = []  # the LocalQueues' shares written
        self._alphas: dict[float, float] = {}
        # per elapsed time since a sample: alpha, 1 - alpha, whether the usage restarts from zero
        self._factors: dict[float, tuple[float, float, bool]] = {}
        self._tick_times: list[float] = []  # the ticks recorded (event stepping)
        self._usage_rows: dict[str, tuple[str, tuple[str, ...], list[list]]] = {}
        self._usage_since: dict[str, int] = {}  # per LocalQueue, the first tick whose usage is unwritten

    # --- plumbing ---------------------------------------------------------------------------

    def _push(self, t: float, kind: int, payload: Any = None) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t, kind, self._seq, payload))

    def _series_resources(self) -> dict[str, tuple[str, ...]]:
        wanted: dict[str, set[str]] = {key: set() for key in self.locals}
        for job in self.jobs.values():
            wanted[job.spec.local_queue].update(r for r, a in job.spec.requests.items() if a)
        for key, usage in self.scenario.initial_usage.items():
            wanted[key].update(usage)
        return {key: tuple(sorted(resources)) for key, resources in sorted(wanted.items())}

    def _passes_are_monotone(self) -> bool:
        """Whether a pass admits something exactly when some pending workload fits at its start.

        True without preemption of any kind (ClusterQueues' and namespaces'), without
        ``StrictFIFO`` (a blocked head would make the order matter) and without safe admission
        (its gate moves with time). Then the order of a pass (scores, fair shares) decides only
        *who* goes first, never *whether* anything goes: quota only shrinks during a pass, so a
        workload that does not fit at the start of a pass fits at no later point of it, and the
        first candidate that fits at the start is admitted when its turn comes (nothing was
        admitted before it, and no class of it has failed). So a pass in which nothing fits
        admits nothing and evicts nothing (drains aside, see ``_pass_needed``).
        """
        if self.safe_budgets:
            return False
        for queue in self.scenario.cluster_queues:
            if queue.preemption.enabled or queue.queueing_strategy == STRICT_FIFO:
                return False
        return all(n.within_namespace == PREEMPT_NEVER or not n.quota for n in self.scenario.namespaces)

    def _stop_policies(self) -> tuple[frozenset[str], frozenset[str]]:
        """LocalQueues stopped by their own or their ClusterQueue's stop policy; those drained."""
        stopped, drained = set(), set()
        for key, local in self.locals.items():
            policies = (local.stop_policy, self.queues[local.cluster_queue].stop_policy)
            if any(p != STOP_NONE for p in policies):
                stopped.add(key)
            if STOP_HOLD_AND_DRAIN in policies:
                drained.add(key)
        return frozenset(stopped), frozenset(drained)

    def _count_pending(self, job: _Job, sign: int) -> None:
        """Keep the pending requests per LocalQueue (TimeAware demand) as the pass sums them, and
        the pending workloads per LocalQueue and resource (contention)."""
        waiting, totals = self.waiting[job.spec.local_queue], self.waiting_total
        for resource, amount in job.spec.requests.items():
            if amount:
                waiting[resource] = waiting.get(resource, 0) + sign
                totals[resource] = totals.get(resource, 0) + sign
        if self._share_state is None:
            return
        demand = self._pending_demand[job.spec.local_queue]
        for resource, amount in job.pending.requests.items():
            if amount:
                total = demand.get(resource, 0) + sign * amount
                if total:
                    demand[resource] = total
                else:
                    del demand[resource]

    def _blocked(self) -> tuple[Set[str], Set[str]]:
        """LocalQueues a pass would not admit from (stopped or held), and those it drains."""
        if not self.holds:
            return self._stopped, self._drained
        stopped, drained = set(self._stopped), set(self._drained)
        for hold in self.holds:
            for key, local in self.locals.items():
                if (
                    (hold.target_kind == "localQueue" and hold.target == key)
                    or (hold.target_kind == "namespace" and hold.target == local.namespace)
                    or (hold.target_kind == "clusterQueue" and hold.target == local.cluster_queue)
                ):
                    stopped.add(key)
                    if hold.drain:
                        drained.add(key)
        return stopped, drained

    def _pass_needed(self) -> bool:
        """Would a pass now admit or evict anything? Always yes unless passes are monotone
        (``_passes_are_monotone``); then yes when a running workload is drained (by a stop
        policy or a hold) or when a pending workload its LocalQueue would offer (not stopped or
        held) fits its namespace quota and its ClusterQueue now (the quota tree is kept up to
        date with the running workloads, as the pass would load it). Classes are checked once
        per ClusterQueue and request shape, and not again until the tree changes."""
        if not self.skippable:
            return True
        stopped, drained = self._blocked()
        if drained and any(job.spec.local_queue in drained for job in self.running.values()):
            return True
        tree = self.tree
        assert tree is not None
        fits = self._fits  # kept from the last call while the tree is unchanged
        for key in self.index.local_queues():
            if key in stopped:
                continue
            local = self.locals[key]
            quota = self._ns_quota.get(local.namespace)
            used = self.current[node_id("namespace", local.namespace)] if quota else {}
            for items in self.index.classes(key).values():
                workload = items[0]  # a class is one request shape (no preemption: nothing else)
                requests = workload.requests
                if quota and any(
                    requests.get(r, 0) and used.get(r, 0) + requests.get(r, 0) > limit for r, limit in quota.items()
                ):
                    continue
                memo = (local.cluster_queue, workload.shape_key)
                fit = fits.get(memo)
                if fit is None:
                    fit = fits[memo] = tree.assign(local.cluster_queue, requests)[0] is not None
                if fit:
                    return True
        return False

    # --- the run ------------------------------------------------------------------------------

    def _fraction(self, t: float, finished: int) -> float:
        """How far the run is: simulated time over the horizon, or finished work over all work
        (without a horizon the run ends when the work is done)."""
        if self.horizon is not None:
            return min(1.0, t / self.horizon) if self.horizon > 0 else 1.0
        return finished / len(self.jobs) if self.jobs else 1.0

    def run(self, progress: Progress | None = None) -> dict[str, Any]:
        for job in self.jobs.values():
            self._push(float(job.spec.submit_at), _SUBMIT, job)
        self._push(0.0, _TICK, 0)
        interval = self.policy.usage_sampling_interval_seconds
        self._push(float(interval), _SAMPLE, 1)
        for cluster in self.scenario.clusters:
            if cluster.unavailable is not None:
                self._push(float(cluster.unavailable[0]), _CLUSTER, (cluster.name, True))
                self._push(float(cluster.unavailable[1]), _CLUSTER, (cluster.name, False))
        for index, budget in enumerate(self.budgets):
            self._push(0.0, _BUDGET, index)
            spec = budget.spec
            if spec.monthly_anchor is not None:
                clock = self.scenario.clock
                assert clock.start is not None  # the loader requires it for monthly renewal
                budget.renewals = monthly_boundaries(spec.monthly_anchor, clock.start, clock.time_zone)
                self._push_renewal(budget, index, next(budget.renewals))
            elif spec.renewal_seconds:
                first = spec.first_renewal_seconds or spec.renewal_seconds
                self._push_renewal(budget, index, float(first))
        now = 0.0
        future_submissions = len(self.jobs)
        finished = 0
        reported = -1
        while self._heap:
            t = self._heap[0][0]
            if self.horizon is not None and t > self.horizon:
                break
            if self.horizon is None and not self.running and future_submissions == 0:
                break
            self._advance_budgets(t)
            now = t
            dirty = False
            tick = False
            while self._heap and self._heap[0][0] == t:
                _, kind, _, payload = heapq.heappop(self._heap)
                if kind == _FINISH:
                    job, token = payload
                    if job.state == "Admitted" and job.token == token:
                        self._finish(job, t)
                        finished += 1
                        dirty = True
                elif kind == _SUBMIT:
                    future_submissions -= 1
                    payload.state = "Pending"
                    payload.pending_since = t
                    self.pending[payload.spec.name] = payload
                    self.index.add(payload.pending)
                    self._count_pending(payload, 1)
                    dirty = True
                elif kind == _RENEW:
                    renewed = self.budgets[payload]
                    self._renew(renewed, t)
                    if renewed.renewals is not None:
                        self._push_renewal(renewed, payload, next(renewed.renewals))
                    else:
                        self._push_renewal(renewed, payload, t + float(renewed.spec.renewal_seconds or 0))
                    dirty = True  # a lifted hold admits; a new period needs its exhaustion check
                elif kind == _BUDGET:
                    dirty |= self._check_budget(self.budgets[payload], t)
                elif kind == _SAMPLE:
                    self._sample(t)
                    self._push(float((payload + 1) * interval), _SAMPLE, payload + 1)
                    dirty = True
                elif kind == _TICK:
                    tick = True
                    self._push(float((payload + 1) * self.tick), _TICK, payload + 1)
                elif kind == _CLUSTER:
                    self._set_cluster(t, *payload)
                    dirty = True
            if dirty:
                if self._pass_needed():
                    self._passes(t, reasons=False)
                else:
                    # A pass would decide nothing (``_pass_needed``): it would only schedule
                    # the budget checks and, TimeAware, recompute the fair shares the series
                    # show, which waits until a tick records them.
                    self._schedule_budget_checks(t)
                    self._shares_stale = self.time_aware
                    self.skipped += 1
            if dirty:  # only a submission, a finish, a pass or a hold changes what waits
                self._note_contention(t)
            if tick:
                self._record(t)
            if progress is not None:
                percent = int(100 * self._fraction(t, finished))
                if percent > reported:
                    reported = percent
                    progress(percent / 100)
        end = now if self.horizon is None else float(self.horizon)
        if self.horizon is not None and end > now:
            self._advance_budgets(end)
        self._passes(end, reasons=True)
        self._close_contention(end)
        result = self._result(end)
        if progress is not None and reported < 100:
            progress(1.0)
        return result

    def _set_cluster(self, t: float, name: str, down: bool) -> None:
        """A cluster goes down (its flavors unavailable to the passes and ``_pass_needed``) or
        comes back."""
        if down:
            self.down.add(name)
        else:
            self.down.discard(name)
        self.unavailable = frozenset(f for f, c in self.flavor_cluster.items() if c in self.down)
        if self.tree is not None:
            self.tree.unavailable = self.unavailable
            self._fits = {}
        self.events.append({"t": _num(t), "type": "clusterDown" if down else "clusterUp", "cluster": name})

    def _passes(self, t: float, *, reasons: bool) -> None:
        gated: dict[str, tuple[str, str]] = {}
        for _ in range(_MAX_PASSES_PER_STEP):
            # Gated workloads sit this pass out (as live: left out of the snapshot).
            gated = self._safe_admission(t) if self.safe_budgets else {}
            for name in gated:
                self.index.remove(self.jobs[name].pending)
            self.passes += 1
            try:
                layout = self._layout
                if reasons:
                    decided = plan(self._snapshot(with_pending=True, gated=gated), t, share_layout=layout)
                else:
                    decided = plan(
                        self._snapshot(with_pending=False), t, reasons=False, pending=self.index, share_layout=layout
                    )
            finally:
                for name in gated:
                    self.index.add(self.jobs[name].pending)
            self.last_plan = decided
            self.fair_shares = decided.fair_shares
            self._shares_stale = False
            evicted = self._apply(decided, t)
            self._schedule_budget_checks(t)
            if not evicted:
                break
        if reasons:
            assert self.last_plan is not None
            for reason in self.last_plan.pending:
                self.jobs[reason.workload].reason = reason
            for name, (code, message) in gated.items():
                job = self.jobs[name]
                queue = self.locals[job.spec.local_queue].cluster_queue
                job.reason = PendingReason(name, job.spec.local_queue, queue, code, message, 0)  # not in line

    def _snapshot(self, *, with_pending: bool, gated: Mapping[str, object] = frozen_map({})) -> Snapshot:
        workloads = [job.pending for name, job in self.pending.items() if name not in gated] if with_pending else []
        workloads.extend(job.admitted for job in self.running.values())  # type: ignore[misc]
        s = self.static
        return Snapshot(
            policy=s.policy,
            flavors=s.flavors,
            cohorts=s.cohorts,
            cluster_queues=s.cluster_queues,
            namespaces=s.namespaces,
            local_queues=s.local_queues,
            workloads=tuple(workloads),
            usage=self.states,
            holds=self.holds,
            historical_usage=self.historical,
            unavailable_flavors=self.unavailable,
        )

    # --- applying decisions -----------------------------------------------------------------

    def _apply(self, decided: Plan, t: float) -> bool:
        for eviction in decided.evictions:
            job = self.jobs[eviction.workload]
            if job.state != "Admitted":
                continue
            self._release(job, t)
            job.state = "Pending"
            job.admitted = None
            job.evictions += 1
            job.pending_since = t
            job.token += 1
            self.pending[job.spec.name] = job
            self.index.add(job.pending)
            self._count_pending(job, 1)
            event = {
                "t": _num(t),
                "type": "preempted" if eviction.code == PREEMPTED else "evicted",
                "workload": job.spec.name,
                "localQueue": eviction.local_queue,
                "clusterQueue": eviction.cluster_queue,
                "reason": eviction.code,
                "message": eviction.message,
            }
            if eviction.preemptor is not None:
                event["preemptor"] = eviction.preemptor
            self.events.append(event)
        for admission in decided.admissions:
            job = self.pending.pop(admission.workload)
            self.index.remove(job.pending)
            self._count_pending(job, -1)
            job.state = "Admitted"
            job.wait += t - job.pending_since
            job.admitted_at = t
            job.reason = None
            job.admitted = Workload(
                job.pending.key,
                job.pending.local_queue,
                job.pending.requests,
                job.pending.priority,
                job.pending.queued_at,
                job.pending.pod_sets,
                True,
                t,
                admission.cluster_queue,
                admission.assignment,
            )
            self._take(job, t)
            for nid in job.path:
                self.states[nid] = add_penalty(self.states[nid], admission.penalty)
            run_seconds = job.spec.run_seconds
            if run_seconds is not None:
                job.token += 1
                self._push(t + run_seconds, _FINISH, (job, job.token))
            self.events.append(
                {
                    "t": _num(t),
                    "type": "admitted",
                    "workload": job.spec.name,
                    "localQueue": admission.local_queue,
                    "clusterQueue": admission.cluster_queue,
                    "flavors": dict(sorted(admission.assignment.items())),
                }
            )
        return bool(decided.evictions)

    def _finish(self, job: _Job, t: float) -> None:
        self._release(job, t)
        job.state = "Finished"
        job.finished_at = t
        self.events.append(
            {
                "t": _num(t),
                "type": "finished",
                "workload": job.spec.name,
                "localQueue": job.spec.local_queue,
                "clusterQueue": job.admitted.cluster_queue if job.admitted else None,
            }
        )

    def _take(self, job: _Job, t: float) -> None:
        self.running[job.spec.name] = job
        if self.tree is not None and job.admitted is not None:
            job.amounts = flavor_amounts(job.admitted.requests, job.admitted.assignment)
            self.tree.add(job.admitted.cluster_queue or self.locals[job.spec.local_queue].cluster_queue, job.amounts)
            self._fits = {}
        self._change(job, t, 1)

    def _release(self, job: _Job, t: float) -> None:
        self.running.pop(job.spec.name, None)
        if self.tree is not None and job.admitted is not None:
            self.tree.remove(job.admitted.cluster_queue or self.locals[job.spec.local_queue].cluster_queue, job.amounts)
            self._fits = {}
        self._change(job, t, -1)

    def _change(self, job: _Job, t: float, sign: int) -> None:
        key = job.spec.local_queue
        if not self.reference:
            self._flush_allocation(key)
            self._flush_usage(key)
        requests = job.spec.requests
        for nid in job.path:
            current = self.current[nid]
            for resource, amount in requests.items():
                current[resource] = current.get(resource, 0) + sign * amount
        lq_current = self.current[job.path[0]]
        if self.cluster_alloc and job.admitted is not None:
            assignment = job.admitted.assignment
            for resource, amount in requests.items():
                cluster = self.flavor_cluster.get(assignment.get(resource, ""))
                if amount and cluster is not None:
                    integral = self.cluster_alloc[cluster].setdefault(resource, _Integral(since=0.0))
                    integral.set(integral.value + sign * amount, t)
        for resource, amount in requests.items():
            if not amount:
                continue
            total = self.total_alloc.setdefault(resource, _Integral(since=0.0))
            total.set(total.value + sign * amount, t)
            if resource in self.contended:
                self.contended_alloc.setdefault(resource, _Integral(since=0.0)).set(total.value, t)
            integral = self.lq_alloc[key].setdefault(resource, _Integral(since=0.0))
            integral.set(lq_current.get(resource, 0), t)
            if self.time_aware:
                value = float(lq_current.get(resource, 0))
                if self.reference:
                    points = self.history[key].setdefault(resource, [])
                    if points and points[-1][0] == t:
                        points[-1] = (t, value)
                    else:
                        points.append((t, value))
                    continue
                times, amounts = self.steps[key].setdefault(resource, ([], []))
                if times and times[-1] == t:
                    amounts[-1] = value
                else:
                    times.append(t)
                    amounts.append(value)
        for budget in self.budgets:
            budget.rate = self._budget_rate(budget)

    # --- contention -------------------------------------------------------------------------

    def _note_contention(self, t: float) -> None:
        """After the passes of moment ``t``: which resources does a workload still pending (in a
        LocalQueue neither stopped nor held) request? Opens and closes contended stretches per
        resource, and the intervals in which any resource is contended."""
        totals = self.waiting_total
        if self.holds or self._stopped:
            blocked = self._blocked()[0]
            waiting = self.waiting
            contended = frozenset(
                resource
                for resource, count in totals.items()
                if count - sum(waiting[key].get(resource, 0) for key in blocked) > 0
            )
        else:
            contended = frozenset(resource for resource, count in totals.items() if count > 0)
        if contended == self.contended:
            return
        for resource in contended ^ self.contended:
            now_contended = resource in contended
            self.contended_time.setdefault(resource, _Integral(since=0.0)).set(1.0 if now_contended else 0.0, t)
            total = self.total_alloc.get(resource)
            value = total.value if (total is not None and now_contended) else 0.0
            self.contended_alloc.setdefault(resource, _Integral(since=0.0)).set(value, t)
        if contended and not self.contended:
            self.contention_intervals.append([t, t])
        elif self.contended and not contended:
            self.contention_intervals[-1][1] = t
        self.contended = contended

    def _close_contention(self, end: float) -> None:
        """An interval still open at the end of the run ends there."""
        if self.contended and self.contention_intervals:
            self.contention_intervals[-1][1] = end

    def _contention_summary(self, end: float) -> dict[str, Any]:
        intervals = [[_num(start), _num(stop)] for start, stop in self.contention_intervals if stop > start]
        resources: dict[str, dict[str, float | int]] = {}
        for resource, capacity in sorted(self.capacity.items()):
            timer = self.contended_time.get(resource)
            seconds = timer.total(end) if timer is not None else 0.0
            if capacity <= 0 or seconds <= 0:
                continue
            integral = self.contended_alloc.get(resource)
            used = integral.total(end) / seconds if integral is not None else 0.0
            resources[resource] = {"seconds": _num(seconds), "utilization": round(used / capacity, 6)}
        return {
            "seconds": _num(sum(stop - start for start, stop in intervals)),
            "intervals": intervals,
            "resources": resources,
        }

    # --- usage ------------------------------------------------------------------------------

    def _sample(self, t: float) -> None:
        states, current, policy = self.states, self.current, self.policy
        if self.reference:
            for nid, state in states.items():
                states[nid] = sample(state, current[nid], t, policy)
        else:
            for key in self._usage_rows:  # the usage series up to now, from the states before this sample
                self._flush_usage(key)
            # ``usage.sample``'s arithmetic inline, its decay factor computed once per interval
            reset = policy.reset_inactivity_seconds
            alphas = self._alphas
            empty: UsageState | None = None  # the state of every node that stays empty (frozen: one will do)
            for nid, state in states.items():
                now = current[nid]
                last = state.last_update
                if last is None:
                    states[nid] = sample(state, now, t, policy)
                    continue
                previous = state.consumed
                if not previous and not any(now.values()):  # no usage, nothing running: stays empty
                    if last > t:
                        states[nid] = UsageState(consumed=_NOTHING, penalty=_NOTHING, last_update=last)
                    else:
                        if empty is None:
                            empty = UsageState(consumed=_NOTHING, penalty=_NOTHING, last_update=t)
                        states[nid] = empty
                    continue
                elapsed = t - last
                if reset > 0 and elapsed > reset:
                    previous = _NOTHING
                alpha = alphas.get(elapsed)
                if alpha is None:
                    alpha = alphas[elapsed] = decay_alpha(elapsed, policy.usage_half_life_seconds)
                consumed: dict[str, float] = {}
                for resource in sorted(previous.keys() | now.keys()):
                    value = (1.0 - alpha) * previous.get(resource, 0.0) + alpha * float(now.get(resource, 0))
                    if value != 0.0:
                        consumed[resource] = value
                states[nid] = UsageState(
                    consumed=frozen_map(consumed), penalty=_NOTHING, last_update=t if t > last else last
                )
        if not self.time_aware:
            return
        if not self.reference:
            self._sample_history(t)
            return
        window = self.policy.usage_window
        half_life = self.policy.usage_half_life_seconds
        historical: dict[str, Mapping[str, float]] = {}
        for key, per_resource in self.history.items():
            capacity = self.scope_capacity.get(key, {})
            shares: dict[str, float] = {}
            for resource, points in per_resource.items():
                prune_samples(points, t, window.size_seconds, window.type)
                shares[resource] = windowed_share(
                    points, [(0.0, float(capacity.get(resource, 0)))], t, window.size_seconds, window.type, half_life
                )
            historical[key] = frozen_map(shares)
        self.historical = frozen_map(historical)

    def _sample_history(self, t: float) -> None:
        """``historical`` as the reference computes it, each LocalQueue's computed when first
        read (``_LazyHistory``): a queue that nothing asks for (no fair share divides for it, no
        tie reads it) before the next sample costs nothing. The step series are pruned here."""
        window = self.policy.usage_window
        start = window_start(t, window.size_seconds, window.type)
        for per_resource in self.steps.values():
            for times, amounts in per_resource.values():
                # ``usage.prune_samples`` on sorted times: keep the last one at or before start
                drop = bisect_right(times, start) - 1
                if drop > 0:
                    del times[:drop], amounts[:drop]
        self.historical = _LazyHistory(self.steps, self.scope_capacity, self.policy, t)

    # --- budgets ------------------------------------------------------------------------------

    def _budget_rate(self, budget: _Budget) -> float:
        spec = budget.spec
        rate = 0.0
        for job in self.running.values():
            if not _under(job, spec, self.locals):
                continue
            quantity = budget_rules.charge_quantity(
                spec.kind,
                job.spec.requests,
                resource=spec.resource,
                flavor=spec.flavor,
                assignment=None if job.admitted is None else job.admitted.assignment,
            )
            if quantity:
                rate += to_base_units(quantity)
        return rate / budget_rules.SECONDS_PER_HOUR

    def _push_renewal(self, budget: _Budget, index: int, t: float) -> None:
        budget.next_renewal = t
        self._push(t, _RENEW, index)

    def _safe_admission(self, t: float) -> dict[str, tuple[str, str]]:
        """The live gate (``budgets.safe_admission``) on the simulator's exact budgets: pending
        workloads with a ``maxRuntime``, in queue order, each reserving its worst case
        (``fairshare.usage.budgets.worst_case``) from what its safe-admission budgets have left:
        the allocation, minus what is used, minus the worst case still ahead of running work.
        Those it would overrun wait with reason ``BudgetInsufficient``."""
        waiting = [job for job in self.pending.values() if job.spec.max_runtime_seconds is not None]
        if not waiting:
            return {}
        rooms = [self._room(budget, t) for budget in self.safe_budgets]
        gated: dict[str, tuple[str, str]] = {}
        for job in sorted(waiting, key=lambda j: (-j.pending.priority, j.pending.queued_at, j.pending.key)):
            max_runtime = float(job.spec.max_runtime_seconds or 0)
            needs = []
            for room in rooms:
                spec = room.budget.spec
                if not _covers_pending(job, spec, self.locals):
                    continue
                quantity = budget_rules.charge_quantity(spec.kind, job.spec.requests, resource=spec.resource)
                needs.append((room, budget_rules.worst_case(quantity, max_runtime, room.seconds_left)))
            blocking = next(((room, need) for room, need in needs if budget_rules.overruns(need, room.available)), None)
            if blocking is not None:
                room, need = blocking
                gated[job.spec.name] = (BUDGET_INSUFFICIENT, _insufficient(room, need, max_runtime))
                continue
            for room, need in needs:
                room.available -= need
        return gated

    def _room(self, budget: _Budget, t: float) -> _Room:
        """What ``budget`` can still promise at ``t``, in unit-seconds (used is exact up to ``t``)."""
        spec = budget.spec
        seconds_left = None if budget.next_renewal is None else budget.next_renewal - t
        ahead = 0.0
        for job in self.running.values():
            if job.spec.max_runtime_seconds is None or job.admitted_at is None or not _under(job, spec, self.locals):
                continue
            quantity = budget_rules.charge_quantity(
                spec.kind,
                job.spec.requests,
                resource=spec.resource,
                flavor=spec.flavor,
                assignment=None if job.admitted is None else job.admitted.assignment,
            )
            left = job.admitted_at + job.spec.max_runtime_seconds - t
            if quantity > 0 and left > 0:
                ahead += budget_rules.worst_case(quantity, left, seconds_left)
        available = (spec.allocated_hours - budget.used_hours) * budget_rules.SECONDS_PER_HOUR - ahead
        return _Room(budget, available, seconds_left)

    def _advance_budgets(self, t: float) -> None:
        for budget in self.budgets:
            budget.used_hours += budget.rate * (t - budget.since)
            budget.since = t

    def _schedule_budget_checks(self, t: float) -> None:
        for index, budget in enumerate(self.budgets):
            if budget.held:
                continue
            seconds = budget_rules.seconds_to_exhaustion(budget.used_hours, budget.spec.allocated_hours, budget.rate)
            if seconds is not None:
                self._push(t + seconds, _BUDGET, index)

    def _check_budget(self, budget: _Budget, t: float) -> bool:
        if budget.held or not budget_rules.exhausted(
            budget.used_hours, budget.spec.allocated_hours, slack=_BUDGET_SLACK_HOURS
        ):
            return False
        budget.held = True
        budget.exhausted_at.append(t)
        spec = budget.spec
        unit = "hours" if spec.kind == "WallTime" else f"{spec.resource}-hours"
        message = f"{spec.label} is exhausted: {budget.used_hours:.4g} of {spec.allocated_hours:g} {unit} used"
        policy = budget_rules.stop_policy(True, spec.action)
        hold = Hold(spec.target_kind, spec.target, BUDGET_EXHAUSTED, message, budget_rules.drains(policy))
        budget.hold = hold
        self.holds = (*self.holds, hold)
        self.events.append(
            {
                "t": _num(t),
                "type": "held",
                spec.target_kind: spec.target,
                "budget": spec.label,
                "reason": BUDGET_EXHAUSTED,
                "action": spec.action,
                "message": message,
            }
        )
        return True

    def _renew(self, budget: _Budget, t: float) -> None:
        """A new period: usage starts at zero (already charged up to ``t``), a hold is lifted."""
        budget.used_hours = 0.0
        budget.period += 1
        if not budget.held:
            return
        spec = budget.spec
        self.holds = tuple(hold for hold in self.holds if hold is not budget.hold)
        budget.held, budget.hold = False, None
        self.events.append(
            {
                "t": _num(t),
                "type": "resumed",
                spec.target_kind: spec.target,
                "budget": spec.label,
                "reason": "BudgetRenewed",
                "message": f"{spec.label} renewed: period {budget.period + 1} starts with {spec.allocated_hours:g} "
                + ("hours" if spec.kind == "WallTime" else f"{spec.resource}-hours"),
            }
        )

    def _budget_summary(self) -> list[dict[str, Any]]:
        return [
            {
                "budget": budget.spec.label,
                budget.spec.target_kind: budget.spec.target,
                "kind": budget.spec.kind,
                "allocatedHours": budget.spec.allocated_hours,
                "usedHours": round(budget.used_hours, 6),
                "period": budget.period + 1,
                "held": budget.held,
                "exhaustedAt": [_num(t) for t in budget.exhausted_at],
                # what runs under it at the end, per hour: the rate the same forecast as the live
                # budget pages (budgets.status.forecast) extrapolates from
                "burnRatePerHour": round(budget.rate * 3600, 6),
            }
            for budget in self.budgets
        ]

    # --- output ------------------------------------------------------------------------------

    def _refresh_fair_shares(self, t: float) -> None:
        """The fair shares a skipped pass would have computed, by the pass's own code
        (``Scoring.time_aware_shares``) on what it would have read: each LocalQueue's allocation,
        the pending requests of those a pass offers (not stopped or held), the historical usage."""
        state = self._share_state
        assert state is not None
        stopped, _ = self._blocked()
        state.alloc = {}
        state.demand = {}
        for key, local in state.locals.items():
            allocated = {r: v for r, v in self.current[local.nid].items() if v}
            if allocated:
                state.alloc[local.nid] = allocated
            pending = self._pending_demand[key]
            if pending and key not in stopped and local.queue.mode == TIME_AWARE:
                state.demand[local.nid] = dict(pending)
        state.shares = {}
        state.ta_demand = {}
        state.snapshot = _History(self.historical)
        Scoring(cast(Any, state)).time_aware_shares(with_demand=False, layout=self._layout)
        self.fair_shares = state.shares  # a new dict each time, only read
        self._shares_stale = False

    def _record(self, t: float) -> None:
        """One point of the series at tick ``t``: what ``_record_reference`` appends, computed
        from what changed since the last tick (allocation and fair shares are carried forward
        until they change; decayed usage, ``usage.projected``'s arithmetic, is written for the
        ticks since a LocalQueue's usage state or allocation last changed, before either
        changes, and at the end: ``_flush_usage``)."""
        if self.reference:
            self._record_reference(t)
            return
        if self._shares_stale:
            self._refresh_fair_shares(t)
        series = self.series
        series.t.append(_num(t))
        rows = self._rows
        if rows is None:
            rows = self._rows = []
            for key, resources in self.series_resources.items():
                alloc = series.allocation.setdefault(key, {})
                usage = series.usage.setdefault(key, {})
                self._alloc_lists[key] = [alloc.setdefault(r, []) for r in resources]
                if resources:
                    row = (node_id("localQueue", key), resources, [usage.setdefault(r, []) for r in resources])
                    rows.append(row)
                    self._usage_rows[key] = row
        self._tick_times.append(t)  # its usage is written when the LocalQueue's state or allocation changes
        fair = self.fair_shares
        if fair is not self._shares_recorded:
            # the values the series show, per (LocalQueue, resource); written from this tick on
            # only when they differ from those written until now (the same LocalQueue shares
            # give the same values)
            shown = [fair.get(nid) for nid in self._share_nids]
            if self._shares_recorded is None or shown != self._shares_shown:
                self._shares_shown = shown
                values = [
                    (key, resource, to_base_units(share.get(resource, 0)))
                    for key, resources in self.series_resources.items()
                    if (share := fair.get(node_id("localQueue", key))) is not None
                    for resource in resources
                ]
                if self._shares_recorded is None or values != self._share_values:
                    self._flush_shares()
                    self._share_values = values
                    self._share_rows = [
                        (series.fair_share.setdefault(key, {}).setdefault(resource, []), value)
                        for key, resource, value in values
                    ]
            self._shares_recorded = fair
        self._ticks += 1

    def _flush_allocation(self, key: str) -> None:
        """Write a LocalQueue's allocation for the ticks recorded since it last changed (call
        before it changes, and at the end)."""
        count = self._ticks - self._alloc_since.get(key, 0)
        if count <= 0:
            return
        self._alloc_since[key] = self._ticks
        current = self.current[node_id("localQueue", key)]
        for resource, target in zip(self.series_resources[key], self._alloc_lists.get(key, ()), strict=False):
            target.extend([to_base_units(current.get(resource, 0))] * count)

    def _flush_usage(self, key: str) -> None:
        """Write a LocalQueue's decayed usage for the ticks recorded since it was last written
        (call before its usage state or allocation changes, and at the end): per tick what
        ``_record_reference`` computes with ``usage.projected``, the same arithmetic inline,
        from the state and allocation that held over those ticks."""
        since = self._usage_since.get(key, 0)
        count = self._ticks - since
        if count <= 0:
            return
        self._usage_since[key] = self._ticks
        row = self._usage_rows.get(key)
        if row is None:
            return
        nid, resources, usage_lists = row
        current = self.current[nid]
        state = self.states[nid]
        previous = state.consumed
        if not previous and not any(current.values()):
            for target in usage_lists:
                target.extend([0.0] * count)
            return
        last = state.last_update
        if last is None:  # never sampled: its consumed values as they are
            for resource, target in zip(resources, usage_lists, strict=True):
                value = previous.get(resource, 0.0)
                target.extend([_round6(value / 1000) if value != 0.0 else 0.0] * count)
            return
        reset = self.policy.reset_inactivity_seconds
        factors = self._factors
        pairs = []  # per tick: alpha, 1 - alpha, and whether the usage restarted from zero
        for t in self._tick_times[since:]:
            elapsed = t - last
            pair = factors.get(elapsed)
            if pair is None:
                alpha = decay_alpha(elapsed, self.policy.usage_half_life_seconds)
                pair = factors[elapsed] = (alpha, 1.0 - alpha, reset > 0 and elapsed > reset)
            pairs.append(pair)
        for resource, target in zip(resources, usage_lists, strict=True):
            before = previous.get(resource, 0.0)
            now = float(current.get(resource, 0))
            for alpha, keep, restarted in pairs:
                # usage.decayed, as ``sample`` computes it
                value = keep * (0.0 if restarted else before) + alpha * now
                target.append(_round6(value / 1000) if value != 0.0 else 0.0)

    def _flush_shares(self) -> None:
        """Write the fair shares for the ticks recorded since they last changed."""
        count = self._ticks - self._share_since
        self._share_since = self._ticks
        if count > 0:
            for target, value in self._share_rows:
                target.extend([value] * count)

    def _flush_series(self) -> None:
        if self.reference:
            return
        for key in self.series_resources:
            self._flush_allocation(key)
            self._flush_usage(key)
        self._flush_shares()

    def _record_reference(self, t: float) -> None:
        series = self.series
        series.t.append(_num(t))
        fair = self.fair_shares
        for key, resources in self.series_resources.items():
            nid = node_id("localQueue", key)
            current = self.current[nid]
            alloc = series.allocation.setdefault(key, {})
            usage = series.usage.setdefault(key, {})
            consumed = projected(self.states[nid], current, t, self.policy) if resources else {}
            share = fair.get(nid)
            for resource in resources:
                alloc.setdefault(resource, []).append(to_base_units(current.get(resource, 0)))
                usage.setdefault(resource, []).append(round(consumed.get(resource, 0.0) / 1000, 6))
                if share is not None:
                    series.fair_share.setdefault(key, {}).setdefault(resource, []).append(
                        to_base_units(share.get(resource, 0))
                    )

    def _result(self, end: float) -> dict[str, Any]:
        self._flush_series()
        workloads: dict[str, Any] = {}
        waits: list[float] = []
        per_queue_waits: dict[str, list[float]] = {key: [] for key in self.locals}
        stats: dict[str, dict[str, int]] = {
            key: {"submitted": 0, "admitted": 0, "finished": 0, "pending": 0, "evictions": 0} for key in self.locals
        }
        admitted_names = {e["workload"] for e in self.events if e["type"] == "admitted"}
        for name, job in self.jobs.items():
            wait = job.wait + (end - job.pending_since if job.state == "Pending" else 0.0)
            reason = None
            if job.state == "Pending" and job.reason is not None:
                reason = {
                    "code": job.reason.code,
                    "message": job.reason.message,
                    "position": job.reason.position,
                    "shortages": [shortage_json(s) for s in job.reason.shortages],
                }
            entry = {
                "state": job.state,
                "localQueue": job.spec.local_queue,
                "clusterQueue": job.admitted.cluster_queue if job.admitted is not None else None,
                "submitAt": _num(job.spec.submit_at),
                "admittedAt": _num(job.admitted_at) if job.admitted_at is not None else None,
                "finishedAt": _num(job.finished_at) if job.finished_at is not None else None,
                "waitSeconds": _num(wait) if job.state != "NotSubmitted" else None,
                "evictions": job.evictions,
                "pendingReason": reason,
            }
            workloads[name] = entry
            if job.state == "NotSubmitted":
                continue
            waits.append(wait)
            per_queue_waits[job.spec.local_queue].append(wait)
            queue_stats = stats[job.spec.local_queue]
            queue_stats["submitted"] += 1
            queue_stats["admitted"] += name in admitted_names
            queue_stats["finished"] += job.state == "Finished"
            queue_stats["pending"] += job.state == "Pending"
            queue_stats["evictions"] += job.evictions
        utilization: dict[str, float] = {}
        for resource, capacity in sorted(self.capacity.items()):
            if capacity <= 0:
                continue
            integral = self.total_alloc.get(resource)
            used = _average(integral, end) if integral is not None else 0.0
            utilization[resource] = round(used / capacity, 6)
        per_local: dict[str, Any] = {}
        fairness: list[float] = []
        namespaces = {n.name: n for n in self.scenario.namespaces}
        for key, lq in sorted(self.locals.items()):
            allocation = {
                r: round(_average(integral, end) / 1000, 6) for r, integral in sorted(self.lq_alloc[key].items())
            }
            share = max(
                (
                    _average(integral, end) / self.capacity[r]
                    for r, integral in self.lq_alloc[key].items()
                    if self.capacity.get(r, 0) > 0
                ),
                default=0.0,
            )
            weight = lq.weight * namespaces[lq.namespace].weight
            per_local[key] = {
                **stats[key],
                "waitSeconds": _percentiles(per_queue_waits[key]),
                "allocation": allocation,
                "dominantShare": round(share, 6),
                "weight": weight,
            }
            if stats[key]["submitted"] and weight > 0:
                fairness.append(share / weight)
        series = self.series
        return {
            "scenario": self.scenario.name,
            "events": self.events,
            "workloads": workloads,
            "series": {
                "t": series.t,
                "allocation": series.allocation,
                "usage": series.usage,
                "fairShare": series.fair_share,
            },
            "summary": {
                "utilization": utilization,
                "jainIndex": round(jain_index(fairness), 6),
                "waitSeconds": _percentiles(waits),
                "perLocalQueue": per_local,
                "endSeconds": _num(end),
                "workloads": {
                    "total": len(self.jobs),
                    "finished": sum(j.state == "Finished" for j in self.jobs.values()),
                    "admitted": sum(j.state == "Admitted" for j in self.jobs.values()),
                    "pending": sum(j.state == "Pending" for j in self.jobs.values()),
                    "notSubmitted": sum(j.state == "NotSubmitted" for j in self.jobs.values()),
                },
                "evictions": sum(j.evictions for j in self.jobs.values()),
                "budgets": self._budget_summary(),
                "contention": self._contention_summary(end),
                **({"clusters": self._cluster_summary(end)} if self.scenario.clusters else {}),
            },
        }

    def _cluster_summary(self, end: float) -> dict[str, Any]:
        """``summary.clusters`` (module docstring): per cluster, in ``clusters`` order."""
        scenario = self.scenario
        capacity: dict[str, dict[str, int]] = {c.name: {} for c in scenario.clusters}
        owners: tuple[ClusterQueue | Cohort, ...] = (*scenario.cluster_queues, *scenario.cohorts)
        for owner in owners:
            for flavor_quotas in owner.quotas:
                cluster = self.flavor_cluster.get(flavor_quotas.flavor)
                if cluster is None:
                    continue
                for resource, quota in flavor_quotas.resources.items():
                    capacity[cluster][resource] = capacity[cluster].get(resource, 0) + quota.nominal
        admitted: dict[str, set[str]] = {c.name: set() for c in scenario.clusters}
        for event in self.events:
            if event["type"] == "admitted":
                for flavor in event["flavors"].values():
                    cluster = self.flavor_cluster.get(flavor)
                    if cluster is not None:
                        admitted[cluster].add(event["workload"])
        waits: dict[str, list[float]] = {c.name: [] for c in scenario.clusters}
        for job in self.jobs.values():
            if job.admitted is None or job.state not in ("Admitted", "Finished"):
                continue
            placed = {self.flavor_cluster.get(f) for f in job.admitted.assignment.values()}
            for cluster in sorted(c for c in placed if c is not None):
                waits[cluster].append(job.wait)
        result: dict[str, Any] = {}
        for spec in scenario.clusters:
            name = spec.name
            utilization = {}
            for resource, nominal in sorted(capacity[name].items()):
                if nominal <= 0:
                    continue  # as the whole run's utilisation: no capacity, no ratio
                integral = self.cluster_alloc[name].get(resource)
                used = _average(integral, end) if integral is not None else 0.0
                utilization[resource] = round(used / nominal, 6)
            down = 0.0
            if spec.unavailable is not None:
                down = max(0.0, min(float(spec.unavailable[1]), end) - min(float(spec.unavailable[0]), end))
            result[name] = {
                "flavors": list(scenario.cluster_flavors(name)),
                "capacity": {r: to_base_units(v) for r, v in sorted(capacity[name].items())},
                "utilization": utilization,
                "admitted": len(admitted[name]),
                "waitSeconds": _percentiles(waits[name]),
                "unavailableSeconds": _num(down),
            }
        return result


def simulate(scenario: Scenario, progress: Progress | None = None, *, stepping: str = EVENT) -> dict[str, Any]:
    """Run ``scenario`` and return the result in its stable JSON form (``fairshare/README.md``, "Simulator").

    ``progress`` (optional) hears the fraction done, so a long run in a worker can report how
    far it is; it must be cheap or throttle itself (it is called up to about a hundred times).

    The cyclic garbage collector is paused meanwhile: a run makes no reference cycles (plans
    and quota trees only point upwards), so there is nothing for it to find, and its scans of
    everything else the process holds would cost more than the simulation.
    """
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return Simulation(scenario, stepping=stepping).run(progress)
    finally:
        if paused:
            gc.enable()


def _covers_pending(job: _Job, spec: BudgetSpec, locals_by_key: Mapping[str, Any]) -> bool:
    """Is a pending workload under the budget's target (its LocalQueue's ClusterQueue, before admission)?"""
    if spec.target_kind == "clusterQueue":
        return locals_by_key[job.spec.local_queue].cluster_queue == spec.target
    return _under(job, spec, locals_by_key)


def _insufficient(room: _Room, need: float, max_runtime: float) -> str:
    spec = room.budget.spec
    unit = "hours" if spec.kind == budget_rules.WALL_TIME else f"{spec.resource}-hours"
    hour = budget_rules.SECONDS_PER_HOUR
    return (
        f"safe admission: up to {need / hour:.4g} {unit} at its maximum runtime of {max_runtime:g}s, but "
        f"{spec.label} has {max(0.0, room.available) / hour:.4g} of {spec.allocated_hours:g} left this period"
    )


def _under(job: _Job, spec: BudgetSpec, locals_by_key: Mapping[str, Any]) -> bool:
    if spec.target_kind == "localQueue":
        return job.spec.local_queue == spec.target
    if spec.target_kind == "namespace":
        return locals_by_key[job.spec.local_queue].namespace == spec.target
    return job.admitted is not None and job.admitted.cluster_queue == spec.target


def _average(integral: _Integral, end: float) -> float:
    if end <= 0:
        return float(integral.value)
    return integral.total(end) / end


def jain_index(values: list[float]) -> float:
    """Jain's fairness index ``(sum x)^2 / (n * sum x^2)``: 1 when all equal; 1 for no data."""
    if not values:
        return 1.0
    squares = sum(v * v for v in values)
    if squares <= 0:
        return 1.0
    return sum(values) ** 2 / (len(values) * squares)


def _percentiles(values: list[float]) -> dict[str, float | int]:
    """Nearest-rank p50 and p95 (0 for no values)."""
    if not values:
        return {"p50": 0, "p95": 0}
    ordered = sorted(values)

    def rank(p: float) -> float | int:
        index = max(0, math.ceil(p * len(ordered)) - 1)
        return _num(ordered[index])

    return {"p50": rank(0.50), "p95": rank(0.95)}


_SCALE = 1e6
_MARGIN = 2.0**-50  # relative: a few units in the last place of the scaled value


def _round6(value: float) -> float:
    """``round(value, 6)``, bit for bit, faster for the usual value.

    ``round(value, 6)`` rounds the exact binary value to 6 decimals (half to even) and reads
    the decimal back, to the nearest float. For ``0 < value`` with ``value * 1e6 < 2**52`` this
    takes ``n``, the nearest integer to the product ``y = value * 1e6`` as computed: that
    product is within half a unit in its last place (less than ``y * 2**-53``) of the exact
    one, so when ``y`` is farther than ``y * 2**-50`` from a half-integer the exact product
    rounds to the same ``n``; and ``n / 1e6`` is the float nearest to ``n`` millionths (IEEE
    division of two exact numbers, as the decimal is read). ``y - n`` and ``0.5 - |y - n|``
    are exact or, when not, far from the margin. Anything else (a near-tie, zero, a negative
    or huge value) goes to ``round`` itself."""
    scaled = value * _SCALE
    if value > 0.0 and scaled < 4503599627370496.0:  # 2**52
        whole = round(scaled)
        if 0.5 - abs(scaled - whole) > scaled * _MARGIN:
            return whole / _SCALE
    return round(value, 6)


def _num(value: float) -> float | int:
    """JSON numbers: whole values as ints, others rounded to microseconds."""
    rounded = round(float(value), 6)
    return int(rounded) if rounded.is_integer() else rounded
