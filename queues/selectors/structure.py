"""The cluster's policy skeleton in five queries: cohorts, ClusterQueues, their quotas and every
LocalQueue's weights, with the derived numbers pages need (capacity, entitlement, the admission
mode in force). Small even at 1,000 LocalQueues (one short row each), and loaded once per page.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Container, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import models

from fairshare.quota.scopes import ancestry
from fairshare.types import NO_FAIR_SHARING
from queues.models import ClusterQueue, ClusterQueueQuota, Cohort, CohortQuota, LocalQueue
from queues.selectors.shares import add, weighted_part


@dataclass(frozen=True)
class QuotaCell:
    flavor: str
    resource: str
    nominal: int
    borrowing_limit: int | None
    lending_limit: int | None


@dataclass
class CohortNode:
    id: int
    name: str
    parent_id: int | None
    weight: Any
    admission_mode: str
    consumed: dict[str, float]
    quotas: list[QuotaCell] = field(default_factory=list)
    children: list[int] = field(default_factory=list)
    cluster_queues: list[int] = field(default_factory=list)


@dataclass
class ClusterQueueNode:
    id: int
    name: str
    cohort_id: int | None
    weight: Any
    queueing_strategy: str
    admission_mode: str
    stop_policy: str
    consumed: dict[str, float]
    weighted_share: float | None
    quotas: list[QuotaCell] = field(default_factory=list)
    effective_mode: str = NO_FAIR_SHARING
    scope: str = ""

    @property
    def capacity(self) -> dict[str, int]:
        """Nominal quota per resource, summed over flavors."""
        total: dict[str, int] = {}
        for cell in self.quotas:
            total[cell.resource] = total.get(cell.resource, 0) + cell.nominal
        return total


@dataclass(frozen=True)
class LocalQueueWeights:
    id: int
    cluster_queue_id: int
    namespace_id: int
    weight: float
    namespace_weight: float


@dataclass
class ClusterStructure:
    cohorts: dict[int, CohortNode]
    cluster_queues: dict[int, ClusterQueueNode]
    local_queues: dict[int, LocalQueueWeights]
    # Derived once by ``load_structure``: weights of namespaces per ClusterQueue and their sums.
    _ns_weight_in: dict[tuple[int, int], float] = field(default_factory=dict)
    _ns_weight_sum: dict[int, float] = field(default_factory=dict)
    _lq_weight_sum: dict[tuple[int, int], float] = field(default_factory=dict)
    _queues_of_namespace: dict[int, set[int]] = field(default_factory=dict)
    _queue_of: dict[int, int] | None = None
    _namespace_of: dict[int, int] | None = None

    # --- shape ---------------------------------------------------------------------------

    def roots(self) -> list[CohortNode]:
        return sorted((c for c in self.cohorts.values() if c.parent_id not in self.cohorts), key=lambda c: c.name)

    def standalone_cluster_queues(self) -> list[ClusterQueueNode]:
        return sorted(
            (q for q in self.cluster_queues.values() if q.cohort_id not in self.cohorts), key=lambda q: q.name
        )

    def cohort_path(self, cohort_id: int | None) -> list[CohortNode]:
        """Cohorts from the root down to ``cohort_id`` (stops at a cycle)."""
        parent_of = {node.id: node.parent_id for node in self.cohorts.values()}
        path = []
        for node_id in ancestry(cohort_id, parent_of):
            if node_id not in self.cohorts:
                break
            path.append(self.cohorts[node_id])
        return list(reversed(path))

    def walk(self) -> list[tuple[str, int, int]]:
        """Depth-first ``(kind, id, depth)`` over cohorts and ClusterQueues, by name."""
        out: list[tuple[str, int, int]] = []

        def visit(cohort: CohortNode, depth: int, seen: set[int]) -> None:
            if cohort.id in seen:
                return
            seen.add(cohort.id)
            out.append(("cohort", cohort.id, depth))
            for child in sorted((self.cohorts[i] for i in cohort.children), key=lambda c: c.name):
                visit(child, depth + 1, seen)
            for cq_id in sorted(cohort.cluster_queues, key=lambda i: self.cluster_queues[i].name):
                out.append(("clusterQueue", cq_id, depth + 1))

        seen: set[int] = set()
        for root in self.roots():
            visit(root, 0, seen)
        for queue in self.standalone_cluster_queues():
            out.append(("clusterQueue", queue.id, 0))
        return out

    def queue_of(self) -> dict[int, int]:
        """LocalQueue id -> ClusterQueue id (built once: the same dict each call, not to be changed)."""
        if self._queue_of is None:
            self._queue_of = {lq.id: lq.cluster_queue_id for lq in self.local_queues.values()}
        return self._queue_of

    def namespace_of(self) -> dict[int, int]:
        """LocalQueue id -> namespace id (built once: the same dict each call, not to be changed)."""
        if self._namespace_of is None:
            self._namespace_of = {lq.id: lq.namespace_id for lq in self.local_queues.values()}
        return self._namespace_of

    def cluster_queues_fed_by(self, namespace_ids: Container[int]) -> set[int]:
        """The ClusterQueues the LocalQueues of ``namespace_ids`` feed: the cluster-wide policy a
        tenant's pages show (the dashboard is stricter than the API there)."""
        return {lq.cluster_queue_id for lq in self.local_queues.values() if lq.namespace_id in namespace_ids}

    # --- capacity and entitlement -------------------------------------------------------------

    def cohort_capacity(self, cohort_id: int) -> dict[str, float]:
        """Nominal quota of a cohort's subtree: its own quota plus every ClusterQueue below."""
        total: dict[str, float] = {}
        for node in self.subtree(cohort_id):
            for cell in node.quotas:
                add(total, {cell.resource: cell.nominal})
            for cq_id in node.cluster_queues:
                add(total, self.cluster_queues[cq_id].capacity)
        return total

    def cluster_capacity(self, cluster_queue_ids: set[int] | None = None) -> dict[str, float]:
        """Everything the cluster can hand out (root cohorts and standalone ClusterQueues), or the
        capacity of the given ClusterQueues' admission units only."""
        total: dict[str, float] = {}
        for root in self.roots():
            if cluster_queue_ids is None or self.subtree_queue_ids(root.id) & cluster_queue_ids:
                add(total, self.cohort_capacity(root.id))
        for queue in self.standalone_cluster_queues():
            if cluster_queue_ids is None or queue.id in cluster_queue_ids:
                add(total, queue.capacity)
        return total

    def subtree(self, cohort_id: int) -> Iterator[CohortNode]:
        """A cohort and every cohort below it, each once (a cycle in the rows stops the walk)."""
        stack, seen = [cohort_id], set()
        while stack:
            node = self.cohorts.get(stack.pop())
            if node is None or node.id in seen:
                continue
            seen.add(node.id)
            yield node
            stack.extend(node.children)

    def subtree_queue_ids(self, cohort_id: int) -> set[int]:
        return {cq_id for node in self.subtree(cohort_id) for cq_id in node.cluster_queues}

    def namespace_entitlement_in(self, namespace_id: int, cluster_queue_id: int) -> dict[str, float]:
        queue = self.cluster_queues[cluster_queue_id]
        weight = self._ns_weight_in.get((cluster_queue_id, namespace_id), 0.0)
        return weighted_part(queue.capacity, weight, self._ns_weight_sum.get(cluster_queue_id, 0.0))

    def local_queue_entitlement(self, local_queue_id: int) -> dict[str, float]:
        lq = self.local_queues[local_queue_id]
        queue = self.cluster_queues[lq.cluster_queue_id]
        namespace_part = weighted_part(queue.capacity, lq.namespace_weight, self._ns_weight_sum.get(queue.id, 0.0))
        return weighted_part(namespace_part, lq.weight, self._lq_weight_sum.get((queue.id, lq.namespace_id), 0.0))

    def namespace_entitlement(self, namespace_id: int) -> dict[str, float]:
        """Summed over every ClusterQueue the namespace has a LocalQueue in."""
        total: dict[str, float] = {}
        for cq_id in sorted(self._queues_of_namespace.get(namespace_id, ())):
            add(total, self.namespace_entitlement_in(namespace_id, cq_id))
        return total


def _effective_mode(queue: ClusterQueueNode, path: list[CohortNode]) -> tuple[str, str]:
    """The admission mode in force and the scope that sets it: the highest scope on the path wins."""
    for cohort in path:  # root first
        if cohort.admission_mode:
            return cohort.admission_mode, f"cohort {cohort.name}"
    if queue.admission_mode:
        return queue.admission_mode, f"ClusterQueue {queue.name}"
    return NO_FAIR_SHARING, "default"


def _cell(row: dict[str, Any]) -> QuotaCell:
    return QuotaCell(row["flavor__name"], row["resource"], row["nominal"], row["borrowing_limit"], row["lending_limit"])


def _nodes(model: type[models.Model], node: type[Any], fields: tuple[str, ...]) -> dict[int, Any]:
    """One node per row, by id: ``fields`` as they are, decayed usage as ``consumed`` (one query)."""
    return {
        row["id"]: node(**{name: row[name] for name in fields}, consumed=row["consumed_resources"] or {})
        for row in model._default_manager.values(*fields, "consumed_resources")
    }


def load_structure() -> ClusterStructure:
    """Five queries, whatever the size of the cluster."""
    cohorts = _nodes(Cohort, CohortNode, ("id", "name", "parent_id", "weight", "admission_mode"))
    queues = _nodes(
        ClusterQueue,
        ClusterQueueNode,
        ("id", "name", "cohort_id", "weight", "queueing_strategy", "admission_mode", "stop_policy", "weighted_share"),
    )
    quota_fields = ("flavor__name", "resource", "nominal", "borrowing_limit", "lending_limit")
    for row in ClusterQueueQuota.objects.order_by(
        "cluster_queue_id", "flavor_order", "flavor__name", "resource"
    ).values("cluster_queue_id", *quota_fields):
        queues[row["cluster_queue_id"]].quotas.append(_cell(row))
    for row in CohortQuota.objects.order_by("cohort_id", "flavor__name", "resource").values("cohort_id", *quota_fields):
        cohorts[row["cohort_id"]].quotas.append(_cell(row))
    for cohort in cohorts.values():
        if cohort.parent_id in cohorts:
            cohorts[cohort.parent_id].children.append(cohort.id)
    for queue in queues.values():
        if queue.cohort_id in cohorts:
            cohorts[queue.cohort_id].cluster_queues.append(queue.id)

    local_queues = {
        lq_id: LocalQueueWeights(lq_id, cq_id, ns_id, float(weight), float(ns_weight))
        for lq_id, cq_id, ns_id, weight, ns_weight in LocalQueue.objects.values_list(
            "id", "cluster_queue_id", "namespace_id", "weight", "namespace__weight"
        )
    }
    structure = ClusterStructure(cohorts=cohorts, cluster_queues=queues, local_queues=local_queues)
    for queue in queues.values():
        queue.effective_mode, queue.scope = _effective_mode(queue, structure.cohort_path(queue.cohort_id))

    ns_sums: dict[int, float] = defaultdict(float)
    lq_sums: dict[tuple[int, int], float] = defaultdict(float)
    queues_of_namespace: dict[int, set[int]] = defaultdict(set)
    for lq in local_queues.values():
        key = (lq.cluster_queue_id, lq.namespace_id)
        if key not in structure._ns_weight_in:
            structure._ns_weight_in[key] = lq.namespace_weight
            ns_sums[lq.cluster_queue_id] += max(lq.namespace_weight, 0.0)
        lq_sums[key] += max(lq.weight, 0.0)
        queues_of_namespace[lq.namespace_id].add(lq.cluster_queue_id)
    structure._ns_weight_sum = dict(ns_sums)
    structure._lq_weight_sum = dict(lq_sums)
    structure._queues_of_namespace = dict(queues_of_namespace)
    return structure
