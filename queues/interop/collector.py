"""A Prometheus collector that reads the fair-share state from the database at each scrape.

A fixed number of queries per scrape (``QUERIES``: one per table, two aggregations, the
backend's health, the last pass per ClusterQueue and the five of ``load_structure`` for the
entitlements), whatever the number of queues: per-object queries would make a scrape of a large
cluster slow and load the database. Levels above the LocalQueue (ClusterQueue, namespace, cohort
subtree) are summed in Python from the same rows.

Units (docs/prometheus.md): a quantity of a resource is in that resource's base unit, which the
``resource`` label names, so one family holds one unit *per resource*: ``cpu`` in cores,
``memory`` and ``ephemeral-storage`` in bytes, ``nvidia.com/gpu`` and other extended resources
as a count. Every HELP says so (``RESOURCE_UNITS``); compare or sum series of one ``resource``
only. The database keeps milli-units. Times are seconds, timestamps Unix seconds.

Families named ``kueue_*`` carry Kueue's names, labels and meaning (``pkg/metrics``), so a
Kueue dashboard or alert works on fairportal unchanged.
"""

from __future__ import annotations

import platform
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

import django
from django.conf import settings
from django.db.models import Count, Sum, Value
from django.db.models.functions import Coalesce
from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import Collector

from fairshare import types as engine
from fairshare.quantities import MILLIS_PER_UNIT
from fairshare.quota.scopes import ancestry
from queues.models import (
    BackendHealth,
    Cluster,
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    LocalQueue,
    Namespace,
    PendingOrder,
    StopPolicy,
    WorkloadResource,
    WorkloadState,
)
from queues.models.workload import Workload
from queues.selectors.shares import dominant_share
from queues.selectors.structure import load_structure

PREFIX = "fairportal"
# Said in the HELP of every family whose values are amounts of a resource.
RESOURCE_UNITS = "in the resource's base unit (cpu: cores, memory: bytes, GPUs and other resources: a count)"
# Queries of one ``DatabaseCollector.collect``, whatever the size of the cluster.
QUERIES = 15
# Pending reasons under which a workload cannot be admitted until something changes (quota,
# a hold, a budget, a stop): Kueue's ``inadmissible``; every other pending workload (waiting
# its turn, or not yet seen by a pass) is ``active``.
INADMISSIBLE_REASONS = frozenset(
    {
        engine.INSUFFICIENT_QUOTA,
        engine.NAMESPACE_QUOTA_EXCEEDED,
        engine.BUDGET_EXHAUSTED,
        engine.BUDGET_INSUFFICIENT,
        engine.QUEUE_STOPPED,
    }
)
# The ``reason`` label of a pending workload no pass has given a reason yet.
NO_REASON = "NotEvaluated"
# ``kueue_cluster_queue_status``: exactly one of these is 1 per ClusterQueue.
CLUSTER_QUEUE_STATUSES = ("pending", "active", "terminating")
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
        self.reasons: dict[Any, dict[str, int]] = defaultdict(lambda: defaultdict(int))  # pending, per reason

    def add_counts(self, key: Any, state: str, count: int, reason: str = "") -> None:
        if state == WorkloadState.PENDING:
            self.pending[key] += count
            self.reasons[key][reason or NO_REASON] += count
        else:
            self.admitted[key] += count

    def add_usage(self, key: Any, resource: str, flavor: str, amount: int) -> None:
        self.usage[key][(resource, flavor)] += amount

    def merge_into(self, other: _Totals, key: Any, into: Any) -> None:
        other.pending[into] += self.pending.get(key, 0)
        other.admitted[into] += self.admitted.get(key, 0)
        for resource_flavor, amount in self.usage.get(key, {}).items():
            other.usage[into][resource_flavor] += amount


class DatabaseCollector(Collector):
    """Gauges per LocalQueue, ClusterQueue, namespace and cohort, read at scrape time
    (``QUERIES`` queries, whatever the number of queues and workloads)."""

    def describe(self) -> Iterable[Metric]:
        return []  # no database read when the collector is registered

    def collect(self) -> Iterator[Metric]:
        local_queues = list(LocalQueue.objects.select_related("namespace", "cluster_queue"))
        cluster_queues = list(ClusterQueue.objects.select_related("cohort"))
        namespaces = list(Namespace.objects.all())
        cohorts = list(Cohort.objects.select_related("parent"))
        counts = (
            Workload.objects.filter(state__in=[WorkloadState.PENDING, WorkloadState.ADMITTED])
            .values("local_queue_id", "cluster_queue_id", "state", code=Coalesce("reason__code", Value("")))
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
            reason = row["code"]  # stored apart (WorkloadReason); read for pending rows only
            per_lq.add_counts(row["local_queue_id"], row["state"], row["n"], reason)
            per_cq.add_counts(cq_id or (lq.cluster_queue_id if lq else None), row["state"], row["n"], reason)
            per_ns.add_counts(lq.namespace_id if lq else None, row["state"], row["n"], reason)
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
        quotas = list(
            ClusterQueueQuota.objects.values(
                "cluster_queue_id", "flavor__name", "resource", "nominal", "borrowing_limit", "lending_limit"
            )
        )
        yield from _quota_families(cluster_queues, cohorts, quotas)
        yield from _reason_families(nodes["cluster_queue"], per_cq, nodes["namespace"], per_ns)
        yield from _kueue_families(cluster_queues, per_cq, quotas)
        yield from _entitlement_families(namespaces, per_ns)
        yield from _loop_families(cluster_queues)


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
        f"Requests of admitted workloads per {what}, resource and flavor, {RESOURCE_UNITS}",
        labels=[*labels, "resource", "flavor"],
    )
    decayed = GaugeMetricFamily(
        f"{PREFIX}_{level}_decayed_usage",
        f"Decayed usage (KEP-4136 consumedResources) per {what} and resource, {RESOURCE_UNITS}",
        labels=[*labels, "resource"],
    )
    share = GaugeMetricFamily(
        f"{PREFIX}_{level}_weighted_share",
        f"Weighted share (KEP-4136 score, a ratio) per {what} at the last usage sample",
        labels=labels,
    )
    weight = GaugeMetricFamily(f"{PREFIX}_{level}_weight", f"Fair-sharing weight per {what} (a ratio)", labels=labels)
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


def _quota_families(
    cluster_queues: list[ClusterQueue], cohorts: list[Cohort], quotas: Sequence[Mapping[str, Any]]
) -> Iterator[Metric]:
    cq_names = {cq.pk: (cq.name, cq.cohort.name if cq.cohort else "") for cq in cluster_queues}
    cohort_names = {c.pk: c.name for c in cohorts}
    cq_quota = GaugeMetricFamily(
        f"{PREFIX}_cluster_queue_nominal_quota",
        f"Nominal quota per ClusterQueue, flavor and resource, {RESOURCE_UNITS}",
        labels=["cluster_queue", "cohort", "flavor", "resource"],
    )
    cohort_quota = GaugeMetricFamily(
        f"{PREFIX}_cohort_nominal_quota",
        f"A cohort's own nominal quota per flavor and resource, {RESOURCE_UNITS}",
        labels=["cohort", "flavor", "resource"],
    )
    capacity = GaugeMetricFamily(
        f"{PREFIX}_cluster_capacity",
        f"Sum of all nominal quotas (ClusterQueues and cohorts) per resource, {RESOURCE_UNITS}: TimeAware's capacity",
        labels=["resource"],
    )
    total: dict[str, int] = defaultdict(int)
    for row in quotas:
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


def _reason_families(
    cq_nodes: list[tuple[Any, list[str], Any]],
    per_cq: _Totals,
    ns_nodes: list[tuple[Any, list[str], Any]],
    per_ns: _Totals,
) -> Iterator[Metric]:
    """Pending workloads per pending reason code (``NotEvaluated``: no pass has seen them yet)."""
    for level, nodes, totals in (("cluster_queue", cq_nodes, per_cq), ("namespace", ns_nodes, per_ns)):
        family = GaugeMetricFamily(
            f"{PREFIX}_{level}_pending_workloads_by_reason",
            f"Pending workloads per {level.replace('_', ' ')} and pending reason code "
            f"(InsufficientQuota, WaitingForFairShare, BudgetExhausted, ...; {NO_REASON}: no pass has seen them yet)",
            labels=[*LEVEL_LABELS[level], "reason"],
        )
        for key, values, _obj in nodes:
            for reason, count in sorted(totals.reasons.get(key, {}).items()):
                family.add_metric([*values, reason], count)
        yield family


def _kueue_families(
    cluster_queues: list[ClusterQueue], per_cq: _Totals, quotas: Sequence[Mapping[str, Any]]
) -> Iterator[Metric]:
    """Kueue's ClusterQueue families, with Kueue's names, labels and meaning.

    fairportal has no admission checks, so a workload's quota reservation is its admission:
    ``kueue_cluster_queue_resource_reservation`` and ``..._resource_usage`` hold the same values.
    """
    cq_labels = ["cohort", "cluster_queue", "flavor", "resource"]
    pending = GaugeMetricFamily(
        "kueue_pending_workloads",
        "Pending workloads per ClusterQueue; status: active (waiting its turn) or inadmissible "
        "(cannot be admitted until quota, a hold, a budget or a stop changes)",
        labels=["cluster_queue", "status"],
    )
    active = GaugeMetricFamily(
        "kueue_admitted_active_workloads",
        "Admitted workloads that have not finished, per ClusterQueue",
        labels=["cluster_queue"],
    )
    status = GaugeMetricFamily(
        "kueue_cluster_queue_status",
        "1 for the ClusterQueue's status, 0 for the others: active (admits), pending (stopped: "
        "stopPolicy Hold or HoldAndDrain), terminating (never in fairportal)",
        labels=["cluster_queue", "status"],
    )
    families = {
        name: GaugeMetricFamily(f"kueue_cluster_queue_{name}", f"{what}, {RESOURCE_UNITS}", labels=cq_labels)
        for name, what in (
            ("resource_reservation", "Quota reserved by admitted workloads per ClusterQueue, flavor and resource"),
            ("resource_usage", "Requests of admitted workloads per ClusterQueue, flavor and resource"),
            ("nominal_quota", "Nominal quota per ClusterQueue, flavor and resource"),
            ("borrowing_limit", "Borrowing limit per ClusterQueue, flavor and resource (absent: unlimited)"),
            ("lending_limit", "Lending limit per ClusterQueue, flavor and resource (absent: all unused quota)"),
        )
    }
    by_id = {cq.pk: cq for cq in cluster_queues}
    cells: dict[int, set[tuple[str, str]]] = defaultdict(set)
    for row in quotas:
        cq = by_id.get(row["cluster_queue_id"])
        if cq is None:
            continue
        values = [cq.cohort.name if cq.cohort else "", cq.name, row["flavor__name"], row["resource"]]
        cells[cq.pk].add((row["resource"], row["flavor__name"]))
        families["nominal_quota"].add_metric(values, base_units(row["nominal"]))
        for limit in ("borrowing_limit", "lending_limit"):
            if row[limit] is not None:
                families[limit].add_metric(values, base_units(row[limit]))
    for cq in cluster_queues:
        cohort = cq.cohort.name if cq.cohort else ""
        used = per_cq.usage.get(cq.pk, {})
        for resource, flavor in sorted(cells[cq.pk] | set(used)):
            amount = base_units(used.get((resource, flavor), 0))
            families["resource_reservation"].add_metric([cohort, cq.name, flavor, resource], amount)
            families["resource_usage"].add_metric([cohort, cq.name, flavor, resource], amount)
        inadmissible = sum(n for code, n in per_cq.reasons.get(cq.pk, {}).items() if code in INADMISSIBLE_REASONS)
        pending.add_metric([cq.name, "active"], per_cq.pending.get(cq.pk, 0) - inadmissible)
        pending.add_metric([cq.name, "inadmissible"], inadmissible)
        active.add_metric([cq.name], per_cq.admitted.get(cq.pk, 0))
        current = "pending" if cq.stop_policy != StopPolicy.NONE else "active"
        for name in CLUSTER_QUEUE_STATUSES:
            status.add_metric([cq.name, name], 1.0 if name == current else 0.0)
    yield from (pending, active, status, *families.values())


def _entitlement_families(namespaces: list[Namespace], per_ns: _Totals) -> Iterator[Metric]:
    """Each namespace's admitted usage against its weighted entitlement (the dashboard's rule,
    ``queues.selectors.analytics.starved_and_reclaimable``): five queries (``load_structure``)."""
    structure = load_structure()
    ratio = GaugeMetricFamily(
        f"{PREFIX}_namespace_entitlement_ratio",
        "A namespace's dominant share of its weighted entitlement: admitted requests over the part of "
        "its ClusterQueues' nominal quota its weight entitles it to, largest over resources (1: exactly "
        "its entitlement; absent: no entitlement)",
        labels=["namespace"],
    )
    starved = GaugeMetricFamily(
        f"{PREFIX}_namespace_starved",
        "1 when a namespace has pending workloads while below its weighted entitlement (ratio < 1), else 0",
        labels=["namespace"],
    )
    for namespace in namespaces:
        amounts: dict[str, float] = defaultdict(float)
        for (resource, _flavor), amount in per_ns.usage.get(namespace.pk, {}).items():
            amounts[resource] += amount
        share = dominant_share(amounts, structure.namespace_entitlement(namespace.pk))
        if share.ratio is not None:
            ratio.add_metric([namespace.name], share.ratio)
        below = share.ratio is not None and share.ratio < 1.0
        starved.add_metric([namespace.name], 1.0 if below and per_ns.pending.get(namespace.pk, 0) else 0.0)
    yield from (ratio, starved)


def _loop_families(cluster_queues: list[ClusterQueue]) -> Iterator[Metric]:
    """The control loop as the database sees it (whichever process ran it): the cluster
    backend's health, the last admission pass per ClusterQueue, and the build. Two queries."""
    backend = settings.CLUSTER_BACKEND
    reachable = GaugeMetricFamily(
        f"{PREFIX}_cluster_backend_reachable",
        "1 while the cluster answers, 0 from a failed call until a sync gets through "
        "(admission passes hold that cluster's flavors meanwhile), per cluster",
        labels=["cluster", "backend"],
    )
    failures = GaugeMetricFamily(
        f"{PREFIX}_cluster_backend_consecutive_failures",
        "Failed calls to the cluster in a row (0 once one gets through), per cluster",
        labels=["cluster", "backend"],
    )
    for found in Cluster.objects.filter(enabled=True).select_related("health"):
        try:
            health: BackendHealth | None = found.health
        except BackendHealth.DoesNotExist:
            health = None
        labels = [found.name, found.effective_backend]
        reachable.add_metric(labels, 0.0 if health is not None and not health.reachable else 1.0)
        failures.add_metric(labels, float(health.failures if health is not None else 0))
    last_pass = GaugeMetricFamily(
        f"{PREFIX}_cluster_queue_last_admission_pass_timestamp_seconds",
        "When the last admission pass over a ClusterQueue planned (Unix seconds; absent before the first)",
        labels=["cluster_queue"],
    )
    names = {cq.pk: cq.name for cq in cluster_queues}
    for cq_id, planned_at in PendingOrder.objects.values_list("cluster_queue_id", "planned_at"):
        if cq_id in names:
            last_pass.add_metric([names[cq_id]], planned_at.timestamp())
    build = InfoMetricFamily(
        f"{PREFIX}_build",
        "fairportal's version (the API's), Python and Django versions and the cluster backend; always 1",
    )
    build.add_metric(
        [],
        {
            "version": str(settings.SPECTACULAR_SETTINGS.get("VERSION", "")),
            "python_version": platform.python_version(),
            "django_version": django.get_version(),
            "cluster_backend": backend,
        },
    )
    yield from (reachable, failures, last_pass, build)
