"""State of one admission pass: fair-tree nodes and per-queue bookkeeping.

Shared by ``planner`` and the parts of the pass it builds and calls: ``scoring``, ``fair_tree`` and
``preemption_rules`` (``PassState``: what they read of the planner). Nothing here outlives a pass.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from fairshare.admission.candidates import class_flags, class_function
from fairshare.quota.quota import FitFailure, QuotaTree
from fairshare.quota.scopes import Scope
from fairshare.types import STRICT_FIFO, ClusterQueue, LocalQueue, Namespace, PendingReason, Shortage, node_id

if TYPE_CHECKING:
    from fairshare.policy import FairSharingPolicy
    from fairshare.preemption.preemption import Running
    from fairshare.types import Cohort, Snapshot, Workload

# Node kinds of the fair tree (also the prefixes of their ids).
LOCAL_QUEUE, QUEUE_NAMESPACE, CLUSTER_QUEUE, COHORT, ROOT = (
    "localQueue",
    "clusterQueueNamespace",
    "clusterQueue",
    "cohort",
    "root",
)


def scope_capacity(tree: QuotaTree, scope: Scope) -> dict[str, int]:
    if scope.kind == "cohort":
        return tree.subtree_nominal("cohort", scope.name)
    return tree.queue_reach(scope.name)


class TreeNode:
    """A node of the fair tree (LocalQueue leaves hold the sorted candidates)."""

    __slots__ = (
        "borrowing_score",
        "classes",
        "cq",
        "fair_parent",
        "grouped",
        "head_cls",
        "heads",
        "heap",
        "idx",
        "items",
        "key",
        "kind",
        "lq",
        "name",
        "nid",
        "parent",
        "parked",
        "score",
        "seq",
        "tie",
        "use_score",
        "version",
        "weight",
    )

    def __init__(self, kind: str, name: str, nid: str, seq: int) -> None:
        self.kind = kind
        self.name = name
        self.nid = nid
        self.parent: TreeNode | None = None
        self.heap: list = []
        self.version = 0
        self.seq = seq
        self.key: tuple | None = None
        self.score = 0.0
        self.tie = 0.0  # breaks ties between +inf scores (weight 0): the unweighted value
        self.use_score = False
        # ClusterQueues in a cohort and cohorts below another (outside TimeAware scopes): the
        # parent compares them by whether their candidate must borrow first (``group``).
        self.grouped = False
        # The parent is a fair scope: group = "this subtree borrows from the parent on the
        # candidate's flavor-resources" (Kueue's FairSharingPrioritizeNonBorrowing, at every
        # level); otherwise the borrowing height (0 within nominal quota, 1 borrowing from the
        # cohort, 2 from the cohort's parent...), Kueue's classical order.
        self.fair_parent = False
        self.borrowing_score = False  # DominantResourceShare with cohortDominantShare: Borrowing
        self.weight = 1.0
        self.parked = False
        self.items: list = []  # with reasons: the candidates in queue order
        self.idx = 0
        self.classes: list = []  # without reasons: per class [candidates, next index, class]
        self.heads: list = []  # without reasons: heap of (order key, slot in classes)
        self.head_cls: Any = None  # the class of the candidate ``FairTree.head`` returned last
        self.cq: QueueState | None = None
        self.lq: LocalState | None = None


class QueueState:
    """Per-ClusterQueue pass state."""

    __slots__ = (
        "blocked",
        "capacity",
        "class_flags",
        "counts",
        "failed",
        "leaves",
        "levels",
        "live",
        "mode",
        "name",
        "node",
        "nominal_memo",
        "path",
        "pending",
        "position",
        "recent",
        "scope",
        "scored_in_cohort",
        "spec",
        "strict",
        "unit",
    )

    def __init__(self, spec: ClusterQueue, scope: Scope, unit: str, path: tuple[str, ...]) -> None:
        self.spec = spec
        self.name = spec.name
        self.scope = scope
        self.mode = scope.mode
        self.unit = unit
        self.strict = spec.queueing_strategy == STRICT_FIFO
        self.node: TreeNode | None = None
        self.path = path  # node ids: the queue, then its cohorts up to the root
        self.failed: dict[Any, ClassFailure] = {}
        self.counts: Counter = Counter()
        self.pending: list[PendingReason] = []
        self.levels = {nid: index for index, nid in enumerate(path)}  # node id -> level in ``path``
        self.nominal_memo: dict[Any, bool] = {}  # class -> fits the nominal quota (until usage changes)
        self.leaves: list[TreeNode] = []
        self.live = 0
        self.position = 0
        self.blocked: str | None = None
        self.recent: dict[str, float] = {}  # LocalQueues admitted this pass -> score when chosen
        self.class_flags = class_flags(spec, scope.mode)
        self.scored_in_cohort = False
        self.capacity: dict[str, int] = {}


class ClassFailure:
    """A class that did not fit: why, whether it fitted at the start of the pass, cached sentences."""

    __slots__ = ("failure", "fits_at_start", "messages")

    def __init__(self, failure: FitFailure, fits_at_start: bool) -> None:
        self.failure = failure
        self.fits_at_start = fits_at_start
        self.messages: dict[str | None, tuple[str, str, tuple[Shortage, ...]]] = {}


class LocalState:
    """Per-LocalQueue pass state."""

    __slots__ = ("block", "class_of", "drain", "namespace", "nid", "ns_nid", "path", "queue", "spec")

    def __init__(self, spec: LocalQueue, queue: QueueState, namespace: Namespace) -> None:
        self.spec = spec
        self.queue = queue
        self.namespace = namespace
        self.nid = node_id(LOCAL_QUEUE, spec.key)
        self.ns_nid = node_id(QUEUE_NAMESPACE, f"{queue.name}/{spec.namespace}")
        self.path = (self.nid, self.ns_nid, *queue.path)
        self.block: tuple[str, str] | None = None
        self.drain: tuple[str, str] | None = None
        self.class_of = class_function(queue.class_flags, spec.key)


K = TypeVar("K", bound=Hashable)


def add_amounts(target: dict[K, int], amounts: Mapping[K, int], sign: int) -> None:
    for resource, amount in amounts.items():
        if amount:
            target[resource] = target.get(resource, 0) + sign * amount


def sum_maps(*maps: Mapping[str, float]) -> dict[str, float]:
    total: dict[str, float] = {}
    for mapping in maps:
        for resource, amount in mapping.items():
            total[resource] = total.get(resource, 0) + amount
    return total


class PassState(Protocol):
    """The pass state the parts of a pass (``Scoring``, ``FairTree``, ``PreemptionRules``) read
    and change: the planner builds it, and hands itself to each part as ``state``."""

    snapshot: Snapshot
    policy: FairSharingPolicy
    reasons: bool
    cohorts: dict[str, Cohort]
    namespaces: dict[str, Namespace]
    queues: dict[str, QueueState]
    unit_queues: dict[str, list[str]]
    locals: dict[str, LocalState]
    cohort_scopes: dict[str, Scope | None]
    capacities: dict[str, dict[str, int]]
    tree: QuotaTree
    tree_version: int
    lendables: dict[str, dict[str, int]]
    reaches: dict[str, dict[str, int]]
    ns_used: dict[str, dict[str, int]]
    alloc: dict[str, dict[str, int]]
    running: dict[str, dict[str, Running]]
    by_local: dict[str, Any]
    demand: dict[str, dict[str, int]]
    shares: dict[str, dict[str, int]]
    ta_demand: dict[str, Mapping[str, float]]

    def path_in(self, local: LocalState, queue_name: str) -> tuple[str, ...]: ...

    def take(self, item: Running, path: tuple[str, ...]) -> None: ...

    def release(self, item: Running, path: tuple[str, ...]) -> None: ...

    def park(self, queue: QueueState) -> None: ...

    def pending_quota(self, workload: Workload, local: LocalState, queue: QueueState, record: ClassFailure) -> None: ...
