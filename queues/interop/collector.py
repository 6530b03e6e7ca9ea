"""A Prometheus collector that reads the fair-share state from the database at each scrape.

A fixed number of queries per scrape (one per table plus two aggregations), whatever the
number of queues: per-object queries would make a scrape of a large cluster slow and load the
database. Levels above the LocalQueue (ClusterQueue, namespace, cohort subtree) are summed in
Python from the same rows. Values are in base units (cores, bytes, GPUs), as Prometheus
expects; the database keeps milli-units.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import Any

from django.db.models import Count, Sum
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from fairshare.quantities import MILLIS_PER_UNIT
from fairshare.quota.scopes import ancestry
from queues.models import (
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    LocalQueue,
    Namespace,
    WorkloadResource,
    WorkloadState,
)
from queues.models.workload import Workload

PREFIX = "fairportal"
LEVELS = ("local_queue", "cluster_queue", "namespace", "cohort")
LEVEL_LABELS = {
    "local_queue": ["namespace", "local_queue", "cluster_queue"],
    "cluster_queue": ["cluster_queue", "cohort"],
    "namespace": ["namespace"],
    "cohort": ["cohort", "parent"],
}


def base_units(millis: float | int | None) -> float:
    return float(millis or 0) / MILLIS_PER_UNIT


class _Totals:
    """Counts and usage per node of one level, filled from the aggregated rows."""

    def __init__(self) -> None:
        self.pending: dict[Any, int] = defaultdict(int)
        self.admitted: dict[Any, int] = defaultdict(int)
        self.usage: dict[Any, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))

    def add_counts(self, key: Any, state: str, count: int) -> None:
        target = self.pending if state == WorkloadState.PENDING else self.admitted
        target[key] += count

    def add_usage(self, key: Any, resource: str, flavor: str, amount: int) -> None:
        self.usage[key][(resource, flavor)] += amount

    def merge_into(self, other: _Totals, key: Any, into: Any) -> None:
        other.pending[into] += self.pending.get(key, 0)
        other.admitted[into] += self.admitted.get(key, 0)
        for resource_flavor, amount in self.usage.get(key, {}).items():
            other.usage[into][resource_flavor] += amount


class DatabaseCollector(Collector):
    """Gauges per LocalQueue, ClusterQueue, namespace and cohort, read at scrape time."""

    def describe(self) -> Iterable[Metric]:
        return []  # no database read when the collector is registered

    def collect(self) -> Iterator[Metric]:
        local_queues = list(LocalQueue.objects.select_related("namespace", "cluster_queue"))
        cluster_queues = list(ClusterQueue.objects.select_related("cohort"))
        namespaces = list(Namespace.objects.all())
        cohorts = list(Cohort.objects.select_related("parent"))
        counts = (
            Workload.objects.filter(state__in=[WorkloadState.PENDING, WorkloadState.ADMITTED])
            .values("local_queue_id", "cluster_queue_id", "state")
            .annotate(n=Count("id"))
        )
        usage = (
            WorkloadResource.objects.filter(workload__state=WorkloadState.ADMITTED)
            .values("workload__local_queue_id", "workload__cluster_queue_id", "resource", "flavor__name")
            .annotate(amount=Sum("amount"))
        )

        lq_by_id = {lq.pk: lq for lq in local_queues}
        per_lq, per_cq, per_ns, per_cohort = _Totals(), _Totals(), _Totals(), _Totals()
        for row in counts:
            lq = lq_by_id.get(row["local_queue_id"])
            cq_id = (
                row["cluster_queue_id"] if row["state"] == WorkloadState.ADMITTED and row["cluster_queue_id"] else None
            )
            per_lq.add_counts(row["local_queue_id"], row["state"], row["n"])
            per_cq.add_counts(cq_id or (lq.cluster_queue_id if lq else None), row["state"], row["n"])
            per_ns.add_counts(lq.namespace_id if lq else None, row["state"], row["n"])
        for used in usage:
            lq = lq_by_id.get(used["workload__local_queue_id"])
            cq_id = used["workload__cluster_queue_id"] or (lq.cluster_queue_id if lq else None)
            key = (used["resource"], used["flavor__name"] or "")
            per_lq.add_usage(used["workload__local_queue_id"], *key, used["amount"])
            per_cq.add_usage(cq_id, *key, used["amount"])
            per_ns.add_usage(lq.namespace_id if lq else None, *key, used["amount"])
        for cohort_id, queue_ids in _cohort_subtrees(cohorts, cluster_queues).items():
            for queue_id in queue_ids:
                per_cq.merge_into(per_cohort, queue_id, cohort_id)

        nodes: dict[str, list[tuple[Any, list[str], Any]]] = {
            "local_queue": [(lq.pk, [lq.namespace.name, lq.name, lq.cluster_queue.name], lq) for lq in local_queues],
            "cluster_queue": [(cq.pk, [cq.name, cq.cohort.name if cq.cohort else ""], cq) for cq in cluster_queues],
            "namespace": [(ns.pk, [ns.name], ns) for ns in namespaces],
            "cohort": [(c.pk, [c.name, c.parent.name if c.parent else ""], c) for c in cohorts],
        }
        totals = {"local_queue": per_lq, "cluster_queue": per_cq, "namespace": per_ns, "cohort": per_cohort}
        for level in LEVELS:
            yield from _level_families(level, nodes[level], totals[level])
        yield from _quota_families(cluster_queues, cohorts)


def _cohort_subtrees(cohorts: list[Cohort], cluster_queues: list[ClusterQueue]) -> dict[int, list[int]]:
    """For each cohort, the ClusterQueues anywhere below it (cycles are cut, never looped)."""
    direct: dict[int, list[int]] = defaultdict(list)
    for cq in cluster_queues:
        if cq.cohort_id is not None:
            direct[cq.cohort_id].append(cq.pk)
    parent = {c.pk: c.parent_id for c in cohorts}
    subtree: dict[int, list[int]] = {c.pk: [] for c in cohorts}
    for cohort_id, queue_ids in direct.items():
        for node in ancestry(cohort_id, parent):
            if node not in subtree:
                break
            subtree[node].extend(queue_ids)
    return subtree


def _level_families(level: str, nodes: list[tuple[Any, list[str], Any]], totals: _Totals) -> Iterator[Metric]:
    labels = LEVEL_LABELS[level]
    what = level.replace("_", " ")
    pending = GaugeMetricFamily(f"{PREFIX}_{level}_pending_workloads", f"Pending workloads per {what}", labels=labels)
    admitted = GaugeMetricFamily(
        f"{PREFIX}_{level}_admitted_workloads", f"Admitted workloads per {what}", labels=labels
    )
    admitted_usage = GaugeMetricFamily(
        f"{PREFIX}_{level}_admitted_usage",
        f"Requests of admitted workloads per {what}, resource and flavor, in base units (cores, bytes, GPUs)",
        labels=[*labels, "resource", "flavor"],
    )
    decayed = GaugeMetricFamily(
        f"{PREFIX}_{level}_decayed_usage",
        f"Decayed usage (KEP-4136 consumedResources) per {what} and resource, in base units",
        labels=[*labels, "resource"],
    )
    share = GaugeMetricFamily(
        f"{PREFIX}_{level}_weighted_share", f"Weighted share (score) per {what} at the last sample", labels=labels
    )
    weight = GaugeMetricFamily(f"{PREFIX}_{level}_weight", f"Fair-sharing weight per {what}", labels=labels)
    for key, values, obj in nodes:
        pending.add_metric(values, totals.pending.get(key, 0))
        admitted.add_metric(values, totals.admitted.get(key, 0))
        for (resource, flavor), amount in sorted(totals.usage.get(key, {}).items()):
            admitted_usage.add_metric([*values, resource, flavor], base_units(amount))
        for resource, amount in sorted((obj.consumed_resources or {}).items()):
            decayed.add_metric([*values, resource], base_units(amount))
        if obj.weighted_share is not None:
            share.add_metric(values, obj.weighted_share)
        weight.add_metric(values, float(obj.weight if obj.weight is not None else Decimal(0)))
    yield from (pending, admitted, admitted_usage, decayed, share, weight)


def _quota_families(cluster_queues: list[ClusterQueue], cohorts: list[Cohort]) -> Iterator[Metric]:
    cq_names = {cq.pk: (cq.name, cq.cohort.name if cq.cohort else "") for cq in cluster_queues}
    cohort_names = {c.pk: c.name for c in cohorts}
    cq_quota = GaugeMetricFamily(
        f"{PREFIX}_cluster_queue_nominal_quota",
        "Nominal quota per ClusterQueue, flavor and resource, in base units",
        labels=["cluster_queue", "cohort", "flavor", "resource"],
    )
    cohort_quota = GaugeMetricFamily(
        f"{PREFIX}_cohort_nominal_quota",
        "A cohort's own nominal quota per flavor and resource, in base units",
        labels=["cohort", "flavor", "resource"],
    )
    capacity = GaugeMetricFamily(
        f"{PREFIX}_cluster_capacity",
        "Sum of all nominal quotas (ClusterQueues and cohorts) per resource, in base units: TimeAware's capacity",
        labels=["resource"],
    )
    total: dict[str, int] = defaultdict(int)
    for row in ClusterQueueQuota.objects.values("cluster_queue_id", "flavor__name", "resource", "nominal"):
        name, cohort = cq_names.get(row["cluster_queue_id"], ("", ""))
        cq_quota.add_metric([name, cohort, row["flavor__name"], row["resource"]], base_units(row["nominal"]))
        total[row["resource"]] += row["nominal"]
    for quota in CohortQuota.objects.values("cohort_id", "flavor__name", "resource", "nominal"):
        cohort_quota.add_metric(
            [cohort_names.get(quota["cohort_id"], ""), quota["flavor__name"], quota["resource"]],
            base_units(quota["nominal"]),
        )
        total[quota["resource"]] += quota["nominal"]
    for resource, amount in sorted(total.items()):
        capacity.add_metric([resource], base_units(amount))
    yield from (cq_quota, cohort_quota, capacity)
