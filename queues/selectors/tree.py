"""The queue tree: cohort -> ClusterQueue -> namespace -> LocalQueue, flattened into table rows.

Pages hold up to ``page_size`` LocalQueues (a ClusterQueue without LocalQueues counts as one
slot); the cohort, ClusterQueue and namespace rows above them are repeated at the top of a page
that starts inside their group. Fixed queries: the structure (5; none when the page passes its
own), the visible LocalQueues (1), holds (1), budgets (1), and the cluster-wide admitted usage
and counts (1 each, none while they are shared: ``live.shared``).

Tenants see the cohort and ClusterQueue rows their LocalQueues feed, with cluster-level totals
(capacity, admitted, borrowed: what explains their waiting), and only their own namespaces and
LocalQueues below them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Q

from core.access import Access
from fairshare.admission.reasons import format_score
from fairshare.types import USAGE_BASED
from queues.models import LocalQueue, StopPolicy
from queues.selectors import live
from queues.selectors.shares import NO_SHARE, Share, add, per_resource, usage_fields
from queues.selectors.structure import ClusterStructure, load_structure
from queues.ui.display import amounts

PAGE_SIZE = 50


@dataclass
class TreeRow:
    """One line of the tree table; ``kind`` is cohort, clusterQueue, namespace, localQueue or empty."""

    kind: str
    depth: int
    name: str
    key: dict[str, str] = field(default_factory=dict)
    weight: Any = None
    mode: str = ""
    mode_scope: str = ""  # who sets ``mode``: "cohort org", "ClusterQueue cq-a" or "default" (nobody)
    quota: list[str] = field(default_factory=list)
    entitlement: list[str] = field(default_factory=list)
    allocated: list[str] = field(default_factory=list)
    borrowed: list[str] = field(default_factory=list)
    decayed: list[str] = field(default_factory=list)
    share: Share = NO_SHARE
    usage_share: Share = NO_SHARE
    score: str = ""
    admitted: int | None = None
    pending: int | None = None
    stop_policy: str = StopPolicy.NONE
    holds: list[live.HoldView] = field(default_factory=list)
    budgets: list[Any] = field(default_factory=list)
    continued: bool = False
    editable: bool = False
    score_value: float | None = None
    node: str = ""  # a stable id per row (``cq-gpu-training``), for collapsing and sorting in the page
    parent: str = ""  # the node of the row it sits under ('' at the top)


@dataclass(frozen=True)
class TreeFilters:
    q: str = ""
    cluster_queue: str = ""
    namespace: str = ""
    cohort: str = ""


@dataclass
class TreePage:
    rows: list[TreeRow]
    page: Page
    total_local_queues: int


def usage_score(value: float | None) -> str:
    """The KEP-4136 score stored at the last sample (weighted decayed usage / weight), in base units."""
    return "" if value is None else format_score(USAGE_BASED, value)


@dataclass(frozen=True)
class _Leaf:
    cluster_queue_id: int
    local_queue_id: int | None  # None: a ClusterQueue without (visible) LocalQueues


def _visible_local_queues(
    viewer: Access, filters: TreeFilters, cluster_queue_ids: set[int] | None = None
) -> list[dict[str, Any]]:
    """The viewer's LocalQueues the filters keep (``cluster_queue_ids``: only those feeding these,
    a cohort's subtree), with what their rows and their namespaces' rows show."""
    rows = viewer.visible_to(LocalQueue.objects.all())
    if cluster_queue_ids is not None:
        rows = rows.filter(cluster_queue_id__in=sorted(cluster_queue_ids))
    if filters.q:
        rows = rows.filter(Q(name__icontains=filters.q) | Q(namespace__name__icontains=filters.q))
    if filters.cluster_queue:
        rows = rows.filter(cluster_queue__name=filters.cluster_queue)
    if filters.namespace:
        rows = rows.filter(namespace__name=filters.namespace)
    return list(
        rows.order_by("namespace__name", "name").values(
            "id",
            "name",
            "namespace_id",
            "namespace__name",
            "namespace__weight",
            "cluster_queue_id",
            "weight",
            "stop_policy",
            "consumed_resources",
            "weighted_share",
        )
    )


def _leaves(structure: ClusterStructure, lqs: list[dict[str, Any]], show_empty: bool) -> list[_Leaf]:
    by_queue: dict[int, list[int]] = defaultdict(list)
    for row in lqs:  # already in namespace/name order
        by_queue[row["cluster_queue_id"]].append(row["id"])
    leaves: list[_Leaf] = []
    for kind, node_id, _depth in structure.walk():
        if kind != "clusterQueue":
            continue
        if by_queue.get(node_id):
            leaves.extend(_Leaf(node_id, lq_id) for lq_id in by_queue[node_id])
        elif show_empty:
            leaves.append(_Leaf(node_id, None))
    return leaves


def queue_tree(
    viewer: Access,
    filters: TreeFilters,
    page_number: Any = 1,
    page_size: int = PAGE_SIZE,
    structure: ClusterStructure | None = None,
    admitted: live.AdmittedUsage | None = None,
) -> TreePage:
    """One page of the tree; ``structure`` and ``admitted`` (the cluster-wide admitted usage): the
    page's own when it has them already (a queue's detail page), so that a page reads and folds
    them once."""
    structure = structure if structure is not None else load_structure()
    inside: set[int] | None = None
    if filters.cohort:  # only the subtree's LocalQueues are read (a cohort's page)
        cohort = next((c for c in structure.cohorts.values() if c.name == filters.cohort), None)
        inside = structure.subtree_queue_ids(cohort.id) if cohort else set()
    lqs = _visible_local_queues(viewer, filters, inside)
    # Admins also see ClusterQueues nobody feeds yet (unless searching for a LocalQueue name).
    leaves = _leaves(structure, lqs, show_empty=viewer.is_admin and not filters.q and not filters.namespace)
    if filters.cluster_queue:
        leaves = [
            leaf for leaf in leaves if structure.cluster_queues[leaf.cluster_queue_id].name == filters.cluster_queue
        ]
    if inside is not None:
        leaves = [leaf for leaf in leaves if leaf.cluster_queue_id in inside]
    page = Paginator(leaves, page_size).get_page(page_number)
    lq_by_id = {row["id"]: row for row in lqs}
    page_lq_ids = [leaf.local_queue_id for leaf in page.object_list if leaf.local_queue_id is not None]
    page_ns_ids = sorted({lq_by_id[i]["namespace_id"] for i in page_lq_ids})
    page_cq_ids = sorted({leaf.cluster_queue_id for leaf in page.object_list})

    admitted = admitted if admitted is not None else live.admitted_usage()
    builder = _RowBuilder(
        viewer=viewer,
        structure=structure,
        lqs=lq_by_id,
        usage=admitted.by_local_queue(),
        cq_usage=admitted.by_cluster_queue_flavor(structure.queue_of()),
        counts=live.counts_by_local_queue(),  # the shared cluster-wide counts (the page's queues' inside)
        holds=live.holds(local_queue_ids=page_lq_ids, namespace_ids=page_ns_ids, cluster_queue_ids=page_cq_ids),
        budgets=live.budgets(local_queue_ids=page_lq_ids, namespace_ids=page_ns_ids, cluster_queue_ids=page_cq_ids),
    )
    rows = builder.rows_for(list(page.object_list), first_on_page=page.number > 1)
    _link_parents(rows)
    return TreePage(rows=rows, page=page, total_local_queues=len(lqs))


_NODE_PREFIX = {"cohort": "co", "clusterQueue": "cq", "namespace": "ns", "localQueue": "lq", "empty": "empty"}


def _link_parents(rows: list[TreeRow]) -> None:
    """Give each row a node id and its parent's, from the depths (a row's parent is the nearest
    row above it that is one level shallower)."""
    stack: list[TreeRow] = []
    for index, row in enumerate(rows):
        while stack and stack[-1].depth >= row.depth:
            stack.pop()
        parent = stack[-1].node if stack else ""
        row.node = f"{parent}/{_NODE_PREFIX[row.kind]}-{row.name}" if row.kind != "empty" else f"{parent}/empty-{index}"
        row.parent = parent
        stack.append(row)


@dataclass
class _RowBuilder:
    viewer: Access
    structure: ClusterStructure
    lqs: dict[int, dict[str, Any]]
    usage: dict[int, dict[str, int]]
    cq_usage: dict[int, dict[tuple[str, str], int]]
    counts: dict[int, live.Counts]
    holds: dict[tuple[str, int], list[live.HoldView]]
    budgets: Mapping[tuple[str, int], list[Any]]
    _members: dict[tuple[int, int], list[dict[str, Any]]] = field(default_factory=dict)
    _cq_counts: dict[int, live.Counts] = field(default_factory=dict)

    def __post_init__(self) -> None:
        members: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
        for lq in self.lqs.values():
            members[(lq["cluster_queue_id"], lq["namespace_id"])].append(lq)
        self._members = dict(members)
        totals: dict[int, list[int]] = defaultdict(lambda: [0, 0])
        for lq_id, counts in self.counts.items():
            weights = self.structure.local_queues.get(lq_id)
            if weights is not None:
                totals[weights.cluster_queue_id][0] += counts.admitted
                totals[weights.cluster_queue_id][1] += counts.pending
        self._cq_counts = {cq_id: live.Counts(a, p) for cq_id, (a, p) in totals.items()}

    def rows_for(self, leaves: list[_Leaf], first_on_page: bool) -> list[TreeRow]:
        rows: list[TreeRow] = []
        shown_cohorts: set[int] = set()
        current_cq: int | None = None
        current_ns: tuple[int, int] | None = None
        for index, leaf in enumerate(leaves):
            continued = first_on_page and index == 0
            queue = self.structure.cluster_queues[leaf.cluster_queue_id]
            if leaf.cluster_queue_id != current_cq:
                path = self.structure.cohort_path(queue.cohort_id)
                for depth, cohort in enumerate(path):
                    if cohort.id not in shown_cohorts:
                        rows.append(self.cohort_row(cohort.id, depth, continued))
                        shown_cohorts.add(cohort.id)
                rows.append(self.cluster_queue_row(queue.id, len(path), continued))
                current_cq, current_ns = leaf.cluster_queue_id, None
            depth = len(self.structure.cohort_path(queue.cohort_id)) + 1
            if leaf.local_queue_id is None:
                rows.append(TreeRow(kind="empty", depth=depth, name="no LocalQueues yet"))
                continue
            lq = self.lqs[leaf.local_queue_id]
            ns_key = (queue.id, lq["namespace_id"])
            if ns_key != current_ns:
                rows.append(
                    self.namespace_row(
                        queue.id, lq["namespace_id"], lq["namespace__name"], lq["namespace__weight"], depth, continued
                    )
                )
                current_ns = ns_key
            rows.append(self.local_queue_row(lq, depth + 1))
        return rows

    # --- one row per level ------------------------------------------------------------------

    def cohort_row(self, cohort_id: int, depth: int, continued: bool) -> TreeRow:
        cohort = self.structure.cohorts[cohort_id]
        capacity = self.structure.cohort_capacity(cohort_id)
        allocated: dict[str, float] = {}
        for cq_id in self.structure.subtree_queue_ids(cohort_id):
            add(allocated, self._cq_allocated(cq_id))
        return TreeRow(
            kind="cohort",
            depth=depth,
            name=cohort.name,
            key={"cohort": cohort.name},
            weight=cohort.weight,
            mode=cohort.admission_mode,
            mode_scope=f"cohort {cohort.name}" if cohort.admission_mode else "",
            quota=amounts(capacity),
            **usage_fields(allocated, cohort.consumed, capacity),
            continued=continued,
            editable=self.viewer.is_admin,
        )

    def _cq_allocated(self, cq_id: int) -> dict[str, float]:
        return per_resource(self.cq_usage.get(cq_id, {}))

    def cluster_queue_row(self, cq_id: int, depth: int, continued: bool) -> TreeRow:
        queue = self.structure.cluster_queues[cq_id]
        used = self.cq_usage.get(cq_id, {})
        borrowed: dict[str, float] = {}
        nominal = {(cell.flavor, cell.resource): cell.nominal for cell in queue.quotas}
        for (flavor, resource), amount in used.items():
            over = amount - nominal.get((flavor, resource), 0)
            if over > 0:
                add(borrowed, {resource: over})
        allocated = self._cq_allocated(cq_id)
        capacity = queue.capacity
        counts = self._cq_counts.get(cq_id, live.Counts())
        return TreeRow(
            kind="clusterQueue",
            depth=depth,
            name=queue.name,
            key={"cluster_queue": queue.name},
            weight=queue.weight,
            mode=queue.effective_mode,
            mode_scope=queue.scope,
            quota=amounts(capacity),
            entitlement=amounts(capacity),
            borrowed=amounts(borrowed),
            **usage_fields(allocated, queue.consumed, capacity),
            score=usage_score(queue.weighted_share),
            score_value=queue.weighted_share,
            admitted=counts.admitted,
            pending=counts.pending,
            stop_policy=queue.stop_policy,
            holds=self.holds.get(("clusterQueue", cq_id), []),
            budgets=self.budgets.get(("clusterQueue", cq_id), []),
            continued=continued,
            editable=self.viewer.is_admin,
        )

    def namespace_row(self, cq_id: int, ns_id: int, name: str, weight: Any, depth: int, continued: bool) -> TreeRow:
        members = self._members.get((cq_id, ns_id), [])
        allocated: dict[str, float] = {}
        decayed: dict[str, float] = {}
        admitted = pending = 0
        for lq in members:
            add(allocated, self.usage.get(lq["id"], {}))
            add(decayed, lq["consumed_resources"] or {})
            counts = self.counts.get(lq["id"], live.Counts())
            admitted += counts.admitted
            pending += counts.pending
        entitlement = self.structure.namespace_entitlement_in(ns_id, cq_id)
        return TreeRow(
            kind="namespace",
            depth=depth,
            name=name,
            key={"namespace": name},
            weight=weight,
            entitlement=amounts(entitlement),
            **usage_fields(allocated, decayed, entitlement),
            admitted=admitted,
            pending=pending,
            holds=self.holds.get(("namespace", ns_id), []),
            budgets=self.budgets.get(("namespace", ns_id), []),
            continued=continued,
            editable=self.viewer.is_admin,
        )

    def local_queue_row(self, lq: dict[str, Any], depth: int) -> TreeRow:
        entitlement = self.structure.local_queue_entitlement(lq["id"])
        allocated = self.usage.get(lq["id"], {})
        consumed = lq["consumed_resources"] or {}
        counts = self.counts.get(lq["id"], live.Counts())
        return TreeRow(
            kind="localQueue",
            depth=depth,
            name=lq["name"],
            key={"namespace": lq["namespace__name"], "name": lq["name"]},
            weight=lq["weight"],
            entitlement=amounts(entitlement),
            **usage_fields(allocated, consumed, entitlement),
            score=usage_score(lq["weighted_share"]),
            score_value=lq["weighted_share"],
            admitted=counts.admitted,
            pending=counts.pending,
            stop_policy=lq["stop_policy"],
            holds=self.holds.get(("localQueue", lq["id"]), []),
            budgets=self.budgets.get(("localQueue", lq["id"]), []),
            editable=self.viewer.can_edit_namespace(lq["namespace_id"]),
        )
