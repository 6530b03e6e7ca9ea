"""The engine's vocabulary: a frozen snapshot of the cluster going in, decisions coming out.

These mirror the Django models (``queues.admission.load`` converts rows to these, ``queues.admission.apply`` decisions back),
so the Celery admission pass, the simulator and the playground all hand the planner the same
shapes. Quantities are ``int`` millis (see ``quantities.py``), times are seconds (epoch seconds
in the live system, seconds from the start in the simulator).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType

from fairshare.policy import FairSharingPolicy

# Admission modes (``admissionScope.admissionMode``), as in Kueue's API plus the two extra modes.
NO_FAIR_SHARING = "NoAdmissionFairSharing"
USAGE_BASED = "UsageBasedAdmissionFairSharing"
DOMINANT_RESOURCE_SHARE = "DominantResourceShare"
TIME_AWARE = "TimeAware"
ADMISSION_MODES = (NO_FAIR_SHARING, USAGE_BASED, DOMINANT_RESOURCE_SHARE, TIME_AWARE)

STRICT_FIFO = "StrictFIFO"
BEST_EFFORT_FIFO = "BestEffortFIFO"
QUEUEING_STRATEGIES = (STRICT_FIFO, BEST_EFFORT_FIFO)

STOP_NONE = "None"
STOP_HOLD = "Hold"
STOP_HOLD_AND_DRAIN = "HoldAndDrain"
STOP_POLICIES = (STOP_NONE, STOP_HOLD, STOP_HOLD_AND_DRAIN)

PREEMPT_NEVER = "Never"
PREEMPT_LOWER_PRIORITY = "LowerPriority"
PREEMPT_LOWER_OR_NEWER_EQUAL = "LowerOrNewerEqualPriority"
PREEMPT_ANY = "Any"
# KEP-752: preempt from LocalQueues whose dominant share of the ClusterQueue exceeds their weight's.
PREEMPT_EXCEED_WEIGHT = "ExceedWeight"
WITHIN_CLUSTER_QUEUE_POLICIES = (
    PREEMPT_NEVER,
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_LOWER_OR_NEWER_EQUAL,
    PREEMPT_EXCEED_WEIGHT,
)
# A namespace's ``preemption.withinNamespace``: may a workload over its namespace's hard quota
# evict admitted workloads of the same namespace (priority rules as ``withinClusterQueue``)?
WITHIN_NAMESPACE_POLICIES = (PREEMPT_NEVER, PREEMPT_LOWER_PRIORITY, PREEMPT_LOWER_OR_NEWER_EQUAL)
RECLAIM_WITHIN_COHORT_POLICIES = (PREEMPT_NEVER, PREEMPT_LOWER_PRIORITY, PREEMPT_ANY)

HOLD_TARGETS = ("localQueue", "namespace", "clusterQueue")

# Pending reason codes.
INSUFFICIENT_QUOTA = "InsufficientQuota"
NAMESPACE_QUOTA_EXCEEDED = "NamespaceQuotaExceeded"
BUDGET_EXHAUSTED = "BudgetExhausted"
# Safe admission (a budget gate, not a hold): the workload's maximum runtime could overrun its budget.
BUDGET_INSUFFICIENT = "BudgetInsufficient"
QUEUE_STOPPED = "QueueStopped"
BLOCKED_BY_STRICT_FIFO_HEAD = "BlockedByStrictFIFOHead"
WAITING_FOR_FAIR_SHARE = "WaitingForFairShare"
# Eviction code of a workload preempted for another one.
PREEMPTED = "Preempted"

_EMPTY: Mapping = MappingProxyType({})


def _empty_map() -> Mapping:
    return _EMPTY


def frozen_map(data: Mapping | None) -> Mapping:
    """A read-only copy, so a snapshot cannot be changed behind the planner's back."""
    return MappingProxyType(dict(data)) if data else _EMPTY


@dataclass(frozen=True, slots=True)
class ResourceQuota:
    """Quota of one resource in one flavor (Kueue's ``nominalQuota``/``borrowingLimit``/``lendingLimit``)."""

    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(frozen=True, slots=True)
class FlavorQuotas:
    """The quotas a ClusterQueue or cohort holds in one flavor."""

    flavor: str
    resources: Mapping[str, ResourceQuota]


@dataclass(frozen=True, slots=True)
class Preemption:
    """Opt-in preemption rules of a ClusterQueue, as in Kueue."""

    within_cluster_queue: str = PREEMPT_NEVER
    reclaim_within_cohort: str = PREEMPT_NEVER

    @property
    def enabled(self) -> bool:
        return self.within_cluster_queue != PREEMPT_NEVER or self.reclaim_within_cohort != PREEMPT_NEVER


@dataclass(frozen=True, slots=True)
class Cohort:
    """A node of the cohort tree; its own quotas are capacity shared by its whole subtree."""

    name: str
    parent: str | None = None
    weight: float = 1.0
    admission_mode: str | None = None
    quotas: tuple[FlavorQuotas, ...] = ()


@dataclass(frozen=True, slots=True)
class ClusterQueue:
    """A ClusterQueue; ``quotas`` order is the order flavors are tried in."""

    name: str
    cohort: str | None = None
    weight: float = 1.0
    queueing_strategy: str = BEST_EFFORT_FIFO
    admission_mode: str | None = None
    quotas: tuple[FlavorQuotas, ...] = ()
    preemption: Preemption = field(default_factory=Preemption)
    stop_policy: str = STOP_NONE


@dataclass(frozen=True, slots=True)
class Namespace:
    """A tenant: weight inside each ClusterQueue's fair tree and a hard quota (missing = unlimited).

    ``within_namespace``: whether a workload over the hard quota may preempt the namespace's own
    admitted workloads (``Never``, ``LowerPriority``, ``LowerOrNewerEqualPriority``).
    """

    name: str
    weight: float = 1.0
    quota: Mapping[str, int] = field(default_factory=_empty_map)
    within_namespace: str = PREEMPT_NEVER


@dataclass(frozen=True, slots=True)
class LocalQueue:
    """``namespace/name`` pointing at one ClusterQueue."""

    key: str
    namespace: str
    cluster_queue: str
    weight: float = 1.0
    stop_policy: str = STOP_NONE


@dataclass(frozen=True, slots=True)
class PodSet:
    """``count`` pods each requesting ``requests`` (millis)."""

    name: str
    count: int
    requests: Mapping[str, int]


def total_requests(pod_sets: tuple[PodSet, ...]) -> dict[str, int]:
    """Sum of ``count x requests`` over pod sets: what quota a workload needs."""
    total: dict[str, int] = {}
    for pod_set in pod_sets:
        for resource, amount in pod_set.requests.items():
            total[resource] = total.get(resource, 0) + amount * pod_set.count
    return total


@dataclass(frozen=True, slots=True)
class Workload:
    """A unit of admission.

    ``requests`` is the total over ``pod_sets``; ``queued_at`` orders the queue. Admitted
    workloads carry their ClusterQueue, flavor ``assignment`` (resource -> flavor) and
    ``admitted_at``. ``bound_cluster``: the cluster it may only run on (its job already exists
    there: submitted to that cluster directly and imported, or placed there before); it is then
    assigned only flavors of that cluster (``Snapshot.flavor_clusters``). Empty: any flavor.

    Derived once at construction (the planner reads them for every candidate of every pass):
    ``order``, the queue order key (priority high first, then timestamp, then name); ``shape``,
    the non-zero requests as a sorted tuple; ``shape_key`` and ``shape_priority``, the same as
    strings (with the binding, ``|cluster``, when bound; and with the priority), whose hash
    Python caches, for grouping candidates: two workloads with the same requests but different
    bindings never share a class, so never a memoised fit.
    """

    key: str
    local_queue: str
    requests: Mapping[str, int]
    priority: int = 0
    queued_at: float = 0.0
    pod_sets: tuple[PodSet, ...] = ()
    admitted: bool = False
    admitted_at: float | None = None
    cluster_queue: str | None = None
    assignment: Mapping[str, str] = field(default_factory=_empty_map)
    priority_class: str = ""  # the WorkloadPriorityClass its priority came from, for explanations
    bound_cluster: str = ""  # the only cluster whose flavors it may be assigned ("": any)
    order: tuple = field(init=False, repr=False, compare=False)
    shape: tuple = field(init=False, repr=False, compare=False)
    shape_key: str = field(init=False, repr=False, compare=False)
    shape_priority: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        shape = tuple(sorted((r, a) for r, a in self.requests.items() if a))
        shape_key = ";".join(f"{r}={a}" for r, a in shape)
        if self.bound_cluster:
            shape_key = f"{shape_key}|{self.bound_cluster}"
        object.__setattr__(self, "order", (-self.priority, self.queued_at, self.key))
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "shape_key", shape_key)
        object.__setattr__(self, "shape_priority", f"{shape_key}@{self.priority}")


@dataclass(frozen=True, slots=True)
class UsageState:
    """Decayed usage of one queue/namespace/cohort (KEP-4136), per resource, in millis."""

    consumed: Mapping[str, float] = field(default_factory=_empty_map)
    penalty: Mapping[str, float] = field(default_factory=_empty_map)
    last_update: float | None = None


@dataclass(frozen=True, slots=True)
class Hold:
    """A stop imposed from outside the queue spec (budgets): no admissions, and evictions if ``drain``."""

    target_kind: str  # one of HOLD_TARGETS
    target: str
    code: str = BUDGET_EXHAUSTED
    message: str = ""
    drain: bool = False


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything one admission pass needs.

    ``usage`` keys are ``localQueue:<ns/name>``, ``clusterQueue:<name>``, ``namespace:<name>``
    and ``cohort:<name>`` (see ``node_id``). ``historical_usage`` is TimeAware's input: per
    LocalQueue key and resource, the windowed, decayed usage divided by the capacity over the
    same window (``usage.windowed_share``).
    """

    policy: FairSharingPolicy = field(default_factory=FairSharingPolicy)
    flavors: tuple[str, ...] = ()
    cohorts: tuple[Cohort, ...] = ()
    cluster_queues: tuple[ClusterQueue, ...] = ()
    namespaces: tuple[Namespace, ...] = ()
    local_queues: tuple[LocalQueue, ...] = ()
    workloads: tuple[Workload, ...] = ()
    usage: Mapping[str, UsageState] = field(default_factory=_empty_map)
    holds: tuple[Hold, ...] = ()
    historical_usage: Mapping[str, Mapping[str, float]] = field(default_factory=_empty_map)
    # Flavors the pass must not assign now (their cluster is unreachable or disabled): work that
    # only fits them waits, everything else is decided as usual.
    unavailable_flavors: frozenset[str] = frozenset()
    # Flavor -> the cluster it belongs to: a workload with a ``bound_cluster`` is assigned only
    # flavors mapped to that cluster. Unbound workloads ignore it (empty: one cluster, or none).
    flavor_clusters: Mapping[str, str] = field(default_factory=_empty_map)


def node_id(kind: str, name: str) -> str:
    """The key of a queue, namespace or cohort in ``Snapshot.usage`` and ``Plan.fair_shares``."""
    return f"{kind}:{name}"


@dataclass(frozen=True, slots=True)
class Admission:
    """Admit ``workload`` into ``cluster_queue`` with ``assignment`` (resource -> flavor).

    ``penalty`` is the entry penalty (millis per resource) to add to the usage state of every
    node on the workload's path: its LocalQueue, namespace, ClusterQueue and cohorts.
    """

    workload: str
    local_queue: str
    cluster_queue: str
    assignment: Mapping[str, str]
    penalty: Mapping[str, float]
    borrowing: bool = False


@dataclass(frozen=True, slots=True)
class Eviction:
    """Evict an admitted workload (back to pending); ``preemptor`` when preempted for another."""

    workload: str
    local_queue: str
    cluster_queue: str
    code: str
    message: str
    preemptor: str | None = None


@dataclass(frozen=True, slots=True)
class Shortage:
    """One resource a request lacks in its ClusterQueue: how much it asks, how much is free.

    ``flavor`` is the flavor the reason names (the closest one of the resource's group), None
    when the ClusterQueue has no quota for the resource in any flavor. ``ceiling``: the most
    the ClusterQueue could ever get of it in that flavor (0 without a flavor). Amounts in millis.
    """

    resource: str
    flavor: str | None
    requested: int
    available: int
    ceiling: int

    @property
    def missing(self) -> int:
        return self.requested - max(self.available, 0)

    @property
    def never_fits(self) -> bool:
        """No flavor at all, or more than the ClusterQueue could ever hold: waiting will not help."""
        return self.flavor is None or self.requested > self.ceiling

    def dominance_key(self) -> tuple:
        """Sort key, dominant shortage first (``fairshare.admission.reasons.dominant_first``)."""
        missing = self.missing
        of_request = Fraction(missing, self.requested) if self.requested > 0 else Fraction(0)
        # Of the quota: what is missing against the most the queue could ever get (no ceiling:
        # it can never get any, the largest fraction there is).
        of_ceiling: Fraction | float = Fraction(missing, self.ceiling) if self.ceiling > 0 else math.inf
        return (not self.never_fits, -of_request, -of_ceiling, self.resource, self.flavor or "")


@dataclass(frozen=True, slots=True)
class PendingReason:
    """Why a workload still waits, and its 1-based position in its ClusterQueue's order.

    ``shortages``: the short resources the message names, dominant first (InsufficientQuota and
    WaitingForFairShare; empty for the other codes).
    """

    workload: str
    local_queue: str
    cluster_queue: str
    code: str
    message: str
    position: int
    shortages: tuple[Shortage, ...] = ()


@dataclass(frozen=True, slots=True)
class Plan:
    """The decisions of one admission pass, in a stable order.

    ``admissions`` in the order they were made, ``evictions`` in the order they were decided,
    ``pending`` by ClusterQueue name then position; ``fair_shares`` (TimeAware scopes only) by
    ``node_id`` and resource, in millis. ``now`` is the time the pass was planned for (the
    admission time of its admissions). ``modes``: the admission mode each ClusterQueue was
    planned under (the winning scope's, see ``quota.scopes``), by name. ``by_reference``: per
    ClusterQueue whose later waiting workloads are explained by reference to its head (see
    ``admission.planner.plan``'s ``explain_first``), the one sentence those reasons share;
    ``by_reference_shortages``: the shortages that sentence names (the head's).
    """

    now: float = 0.0
    admissions: tuple[Admission, ...] = ()
    evictions: tuple[Eviction, ...] = ()
    pending: tuple[PendingReason, ...] = ()
    fair_shares: Mapping[str, Mapping[str, int]] = field(default_factory=_empty_map)
    modes: Mapping[str, str] = field(default_factory=_empty_map)
    by_reference: Mapping[str, str] = field(default_factory=_empty_map)
    by_reference_shortages: Mapping[str, tuple[Shortage, ...]] = field(default_factory=_empty_map)
