"""The admission pass's load step: the bridge from the database to the engine, rows -> engine types.

(The engine's decisions go back to rows in ``admission.apply``. The pending reasons live apart
from the workload rows, in ``WorkloadReason``: writing them leaves the rows, and so what this
module caches by row version, as they were.)

An *admission unit* is the set of ClusterQueues that share quota: a root cohort with its whole
subtree, or a ClusterQueue outside any cohort. It holds one or more admission scopes (the
engine resolves them), and one pass runs per unit under a lock, so two passes never plan
against the same capacity. Building a snapshot costs a fixed number of queries whatever the
number of workloads.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Count, Q, Sum, TextField
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast

from fairshare import types as engine
from fairshare.policy import FairSharingPolicy
from fairshare.quota.scopes import ancestry, closes_cycle
from queues.models import (
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    LocalQueue,
    Namespace,
    NamespaceQuota,
    QueueHold,
    Workload,
    WorkloadReason,
    WorkloadResource,
    WorkloadState,
)
from queues.models.workload import total_requests


@dataclass(frozen=True)
class AdmissionUnit:
    """ClusterQueues that may borrow from each other: the unit one pass locks and plans."""

    key: str
    cohort_ids: tuple[int, ...]
    cluster_queue_ids: tuple[int, ...]


# A stored pending reason as the writer compares it: (code, own sentence, the ClusterQueue id
# whose shared sentence it refers to, the short resources its own sentence names as stored,
# ``reason.shortage_rows``); a reason by reference has no sentence or shortages of its own.
StoredReason = tuple[str, str, int | None, list[dict[str, Any]]]


@dataclass
class LoadedSnapshot:
    """The engine snapshot plus what is needed to write decisions back.

    ``current_reasons``: the stored reason of every pending workload loaded that has one, read
    from ``WorkloadReason`` by every pass (one query; never cached, so a pass of another
    process in between cannot leave a stale one behind).
    """

    unit: AdmissionUnit
    snapshot: engine.Snapshot
    workload_ids: dict[str, int] = field(default_factory=dict)
    local_queue_ids: dict[str, int] = field(default_factory=dict)
    namespace_ids: dict[str, int] = field(default_factory=dict)
    cluster_queue_ids: dict[str, int] = field(default_factory=dict)
    cohort_ids: dict[str, int] = field(default_factory=dict)
    cohort_chain: dict[str, tuple[str, ...]] = field(default_factory=dict)
    current_reasons: dict[str, StoredReason] = field(default_factory=dict)
    aggregated: int = 0  # admitted workloads loaded as per-queue totals (see _admitted_totals)
    # This pass's entry of the per-process cache of pending workloads (``_SEEN[unit.key]``).
    seen: dict[int, _Seen] = field(default_factory=dict, repr=False)
    # The version sums of the pending rows ``seen`` stands for (``_version_sums``). A pass writes
    # no pending row (reasons are stored apart, ``WorkloadReason``), so they stay equal to the
    # rows' until something else changes one: then the next pass reads by row version.
    seen_sums: list[int] = field(default_factory=list, repr=False)
    # Whether this snapshot was read with row versions (``_versions_identify_rows``), and the
    # admitted totals it used (``_admitted_totals``): what ``remember_admissions`` carries on.
    versioned: bool = False
    totals: _Totals | None = field(default=None, repr=False)
    # Workload id -> the version of its stored reason row (read with versions only; the writer
    # records the versions it writes): what ``remember_pass`` keeps for the next pass.
    reason_versions: dict[int, int] = field(default_factory=dict, repr=False)
    pending_ids: frozenset[int] = frozenset()  # the pending workloads loaded (gated ones too)


def epoch(moment: datetime) -> float:
    return moment.timestamp()


# --- units -----------------------------------------------------------------------------------


def _roots(cohorts: Iterable[tuple[int, int | None]]) -> dict[int, int]:
    """Root cohort id of every cohort id (a cycle, which clean() forbids, roots at itself)."""
    parent = dict(cohorts)
    roots: dict[int, int] = {}
    for cohort_id in parent:
        chain = ancestry(cohort_id, parent)
        roots[cohort_id] = cohort_id if closes_cycle(chain, parent) is not None else chain[-1]
    return roots


def admission_units() -> list[AdmissionUnit]:
    """Every unit, in a stable order (two queries)."""
    cohort_rows = list(Cohort.objects.values_list("id", "parent_id", "name"))
    names = {cohort_id: name for cohort_id, _, name in cohort_rows}
    roots = _roots((cohort_id, parent_id) for cohort_id, parent_id, _ in cohort_rows)
    members: dict[int, list[int]] = defaultdict(list)
    for cohort_id, root in roots.items():
        members[root].append(cohort_id)
    queues_by_root: dict[int, list[int]] = defaultdict(list)
    units: list[AdmissionUnit] = []
    for cq_id, cq_name, cohort_id in ClusterQueue.objects.values_list("id", "name", "cohort_id").order_by("name"):
        if cohort_id is None:
            units.append(AdmissionUnit(f"clusterQueue:{cq_name}", (), (cq_id,)))
        else:
            queues_by_root[roots[cohort_id]].append(cq_id)
    for root, cq_ids in queues_by_root.items():
        units.append(AdmissionUnit(f"cohort:{names[root]}", tuple(sorted(members[root])), tuple(sorted(cq_ids))))
    return sorted(units, key=lambda unit: unit.key)


def unit_for_cluster_queue(cluster_queue_id: int) -> AdmissionUnit | None:
    for unit in admission_units():
        if cluster_queue_id in unit.cluster_queue_ids:
            return unit
    return None


def unit_by_key(key: str) -> AdmissionUnit | None:
    return next((unit for unit in admission_units() if unit.key == key), None)


# --- rows -> engine --------------------------------------------------------------------------


def _flavor_quotas(rows: Iterable[Mapping[str, Any]], owner: str) -> dict[int, tuple[engine.FlavorQuotas, ...]]:
    """Quota rows grouped per owner into FlavorQuotas, flavors in their configured order."""
    grouped: dict[int, dict[str, dict[str, engine.ResourceQuota]]] = defaultdict(dict)
    order: dict[tuple[int, str], tuple[int, str]] = {}
    for row in rows:
        owner_id, flavor = row[owner], row["flavor__name"]
        grouped[owner_id].setdefault(flavor, {})[row["resource"]] = engine.ResourceQuota(
            nominal=row["nominal"], borrowing_limit=row["borrowing_limit"], lending_limit=row["lending_limit"]
        )
        rank = (row.get("flavor_order", 0), flavor)
        order[(owner_id, flavor)] = min(order.get((owner_id, flavor), rank), rank)
    return {
        owner_id: tuple(
            engine.FlavorQuotas(flavor=flavor, resources=engine.frozen_map(dict(sorted(resources.items()))))
            for flavor, resources in sorted(flavors.items(), key=lambda item: order[(owner_id, item[0])])
        )
        for owner_id, flavors in grouped.items()
    }


_COHORT_COLUMNS = ("id", "name", "parent__name", "weight", "admission_mode")
_COHORT_QUOTA_COLUMNS = ("cohort", "flavor__name", "resource", "nominal", "borrowing_limit", "lending_limit")
_CQ_COLUMNS = (
    "id",
    "name",
    "cohort__name",
    "weight",
    "queueing_strategy",
    "admission_mode",
    "preemption_within_cluster_queue",
    "reclaim_within_cohort",
    "stop_policy",
)
_CQ_QUOTA_COLUMNS = (
    "cluster_queue",
    "flavor__name",
    "flavor_order",
    "resource",
    "nominal",
    "borrowing_limit",
    "lending_limit",
    "flavor__cluster__name",  # the flavor's cluster (``Snapshot.flavor_clusters``): a join, no query
)
_NAMESPACE_COLUMNS = ("id", "name", "weight", "preemption_within_namespace")


def _cohort(row: Mapping[str, Any], quotas: Mapping[int, tuple[engine.FlavorQuotas, ...]]) -> engine.Cohort:
    return engine.Cohort(
        name=row["name"],
        parent=row["parent__name"],
        weight=float(row["weight"]),
        admission_mode=row["admission_mode"] or None,
        quotas=quotas.get(row["id"], ()),
    )


def _cluster_queue(
    row: Mapping[str, Any], quotas: Mapping[int, tuple[engine.FlavorQuotas, ...]]
) -> engine.ClusterQueue:
    return engine.ClusterQueue(
        name=row["name"],
        cohort=row["cohort__name"],
        weight=float(row["weight"]),
        queueing_strategy=row["queueing_strategy"],
        admission_mode=row["admission_mode"] or None,
        quotas=quotas.get(row["id"], ()),
        preemption=engine.Preemption(
            within_cluster_queue=row["preemption_within_cluster_queue"],
            reclaim_within_cohort=row["reclaim_within_cohort"],
        ),
        stop_policy=row["stop_policy"],
    )


def _namespace(row: Mapping[str, Any], quota: Mapping[str, int]) -> engine.Namespace:
    return engine.Namespace(
        name=row["name"],
        weight=float(row["weight"]),
        quota=engine.frozen_map(dict(sorted(quota.items()))),
        within_namespace=row["preemption_within_namespace"],
    )


def _local_queue(row: Mapping[str, Any]) -> engine.LocalQueue:
    return engine.LocalQueue(
        key=f"{row['namespace__name']}/{row['name']}",
        namespace=row["namespace__name"],
        cluster_queue=row["cluster_queue__name"],
        weight=float(row["weight"]),
        stop_policy=row["stop_policy"],
    )


def usage_state(
    consumed: Mapping[str, Any] | None, penalty: Mapping[str, Any] | None, last_update: datetime | None
) -> engine.UsageState:
    """A status row's stored usage (``consumed_resources``, ``entry_penalty``,
    ``usage_last_update``) as the engine's UsageState: used by the pass and the sampler alike."""
    return engine.UsageState(
        consumed=engine.frozen_map({k: float(v) for k, v in (consumed or {}).items()}),
        penalty=engine.frozen_map({k: float(v) for k, v in (penalty or {}).items()}),
        last_update=epoch(last_update) if last_update else None,
    )


def _usage_state(row: Mapping[str, Any]) -> engine.UsageState:
    return usage_state(row["consumed_resources"], row["entry_penalty"], row["usage_last_update"])


_STATUS_FIELDS = ("consumed_resources", "entry_penalty", "usage_last_update")


def build_snapshot(
    unit: AdmissionUnit,
    policy: FairSharingPolicy,
    *,
    aggregate_admitted: bool = True,
    unavailable_flavors: frozenset[str] = frozenset(),
) -> LoadedSnapshot:
    """The engine's view of ``unit``: a fixed number of queries, whatever the workload count.

    ``unavailable_flavors``: flavors whose cluster is unreachable or disabled (the pass reads
    them first, ``services.cluster.unavailable_flavors``): the engine assigns nothing to them.

    Admitted workloads the pass cannot evict come as per-queue totals (``aggregate_admitted``;
    the plan is the same, see ``_admitted_totals``), so the cost follows the pending work.
    """
    loaded = LoadedSnapshot(unit=unit, snapshot=engine.Snapshot())
    usage: dict[str, engine.UsageState] = {}

    cohort_rows = list(Cohort.objects.filter(id__in=unit.cohort_ids).values(*_COHORT_COLUMNS, *_STATUS_FIELDS))
    cohort_quotas = _flavor_quotas(
        CohortQuota.objects.filter(cohort_id__in=unit.cohort_ids).values(*_COHORT_QUOTA_COLUMNS), "cohort"
    )
    cohorts = []
    for row in cohort_rows:
        loaded.cohort_ids[row["name"]] = row["id"]
        cohorts.append(_cohort(row, cohort_quotas))
        usage[engine.node_id("cohort", row["name"])] = _usage_state(row)
    parents = {cohort.name: cohort.parent for cohort in cohorts}
    for name in parents:
        loaded.cohort_chain[name] = ancestry(name, parents)

    cq_rows = list(ClusterQueue.objects.filter(id__in=unit.cluster_queue_ids).values(*_CQ_COLUMNS, *_STATUS_FIELDS))
    cq_quota_rows = list(
        ClusterQueueQuota.objects.filter(cluster_queue_id__in=unit.cluster_queue_ids).values(*_CQ_QUOTA_COLUMNS)
    )
    cq_quotas = _flavor_quotas(cq_quota_rows, "cluster_queue")
    flavor_clusters = {row["flavor__name"]: row["flavor__cluster__name"] for row in cq_quota_rows}
    cluster_queues = []
    for row in cq_rows:
        loaded.cluster_queue_ids[row["name"]] = row["id"]
        cluster_queues.append(_cluster_queue(row, cq_quotas))
        usage[engine.node_id("clusterQueue", row["name"])] = _usage_state(row)

    versioned = loaded.versioned = _versions_identify_rows()
    lq_rows, local_queues, historical = [], [], {}
    for seen in _local_queues(unit, versioned):
        lq_rows.append(seen.row)
        key = seen.queue.key
        loaded.local_queue_ids[key] = seen.row["id"]
        local_queues.append(seen.queue)
        usage[engine.node_id("localQueue", key)] = seen.usage
        if seen.historical is not None:
            historical[key] = seen.historical

    namespaces = _namespaces(loaded, unit, usage)
    holds = _holds(loaded)
    namespace_preempts = any(ns.within_namespace != engine.PREEMPT_NEVER for ns in namespaces)
    individual = (
        _individual_local_queues(loaded, lq_rows, cq_rows, holds)
        if aggregate_admitted and not namespace_preempts
        else None
    )
    workloads = _workloads(loaded, unit, lq_rows, individual, versioned)
    _stored_reasons(loaded, workloads)
    loaded.snapshot = engine.Snapshot(
        policy=policy,
        unavailable_flavors=unavailable_flavors,
        flavor_clusters=engine.frozen_map(dict(sorted(flavor_clusters.items()))),
        flavors=tuple(
            sorted(
                {fq.flavor for cq in cluster_queues for fq in cq.quotas}
                | {fq.flavor for c in cohorts for fq in c.quotas}
            )
        ),
        cohorts=tuple(sorted(cohorts, key=lambda c: c.name)),
        cluster_queues=tuple(sorted(cluster_queues, key=lambda c: c.name)),
        namespaces=namespaces,
        local_queues=tuple(sorted(local_queues, key=lambda q: q.key)),
        workloads=workloads,
        usage=engine.frozen_map(usage),
        holds=holds,
        historical_usage=engine.frozen_map(historical),
    )
    return loaded


@dataclass(frozen=True)
class ClusterStructure:
    """Every cohort, ClusterQueue, namespace and LocalQueue as engine types: the whole cluster,
    not one unit, and no workloads (what a playground export starts from).

    Namespaces carry their whole hard quota; namespaces and LocalQueues come in id order, keyed
    by id, LocalQueues with their usage state and the row read (the caller's annotations too).
    """

    cohorts: tuple[engine.Cohort, ...]  # by name
    cluster_queues: tuple[engine.ClusterQueue, ...]  # by name
    namespaces: dict[int, engine.Namespace]
    local_queues: dict[int, tuple[engine.LocalQueue, engine.UsageState, dict[str, Any]]]


def load_structure(*, local_queue_annotations: Mapping[str, Any] | None = None) -> ClusterStructure:
    """The whole cluster's structure (seven queries), by the same conversions as ``build_snapshot``."""
    cohort_quotas = _flavor_quotas(CohortQuota.objects.values(*_COHORT_QUOTA_COLUMNS), "cohort")
    cohorts = tuple(_cohort(row, cohort_quotas) for row in Cohort.objects.order_by("name").values(*_COHORT_COLUMNS))
    cq_quotas = _flavor_quotas(ClusterQueueQuota.objects.values(*_CQ_QUOTA_COLUMNS), "cluster_queue")
    cluster_queues = tuple(
        _cluster_queue(row, cq_quotas) for row in ClusterQueue.objects.order_by("name").values(*_CQ_COLUMNS)
    )
    hard: dict[int, dict[str, int]] = defaultdict(dict)
    for namespace_id, resource, amount in NamespaceQuota.objects.values_list("namespace_id", "resource", "hard"):
        hard[namespace_id][resource] = amount
    namespaces = {
        row["id"]: _namespace(row, hard[row["id"]])
        for row in Namespace.objects.order_by("id").values(*_NAMESPACE_COLUMNS)
    }
    rows = LocalQueue.objects.order_by("id")
    if local_queue_annotations:
        rows = rows.annotate(**local_queue_annotations)
    local_queues = {
        row["id"]: (_local_queue(row), _usage_state(row), row)
        for row in rows.values(
            "id",
            "name",
            "namespace_id",
            "namespace__name",
            "cluster_queue__name",
            "weight",
            "stop_policy",
            *_STATUS_FIELDS,
            *(local_queue_annotations or ()),
        )
    }
    return ClusterStructure(cohorts, cluster_queues, namespaces, local_queues)


def _namespaces(
    loaded: LoadedSnapshot, unit: AdmissionUnit, usage: dict[str, engine.UsageState]
) -> tuple[engine.Namespace, ...]:
    """Namespaces of the unit; hard quota reduced by what the namespace holds in other units.

    The unit's namespaces are named by a subquery, not a list of ids: a unit may hold thousands.
    """
    in_unit = LocalQueue.objects.filter(cluster_queue_id__in=unit.cluster_queue_ids).values("namespace_id")
    rows = _namespace_rows(unit, in_unit, loaded.versioned)
    hard: dict[int, dict[str, int]] = defaultdict(dict)
    for namespace_id, resource, amount in (
        NamespaceQuota.objects.filter(namespace_id__in=in_unit)
        .order_by()
        .values_list("namespace_id", "resource", "hard")
    ):
        hard[namespace_id][resource] = amount
    # Only a namespace with a quota and a LocalQueue outside the unit can hold quota elsewhere
    # (the namespaces with a quota by id: their LocalQueues through the namespace index).
    spanning = (
        sorted(
            set(
                LocalQueue.objects.filter(namespace_id__any_of=sorted(hard))
                .exclude(cluster_queue_id__in=unit.cluster_queue_ids)
                .order_by()
                .values_list("namespace_id", flat=True)
            )
        )
        if hard
        else []
    )
    elsewhere: dict[int, dict[str, int]] = defaultdict(dict)
    for row in (
        ()
        if not spanning
        else (
            WorkloadResource.objects.filter(
                workload__namespace_id__any_of=spanning, workload__state=WorkloadState.ADMITTED
            )
            .exclude(workload__cluster_queue_id__in=unit.cluster_queue_ids)
            .values("workload__namespace_id", "resource")
            .annotate(total=Sum("amount"))
        )
    ):
        elsewhere[row["workload__namespace_id"]][row["resource"]] = row["total"]
    namespaces = []
    for ns_row, state in rows:
        loaded.namespace_ids[ns_row["name"]] = ns_row["id"]
        quota = {
            resource: max(0, amount - elsewhere[ns_row["id"]].get(resource, 0))
            for resource, amount in sorted(hard[ns_row["id"]].items())
        }
        namespaces.append(_namespace(ns_row, quota))
        usage[engine.node_id("namespace", ns_row["name"])] = state
    return tuple(sorted(namespaces, key=lambda n: n.name))


# Namespaces per unit from this process's previous snapshot, by row version, as the LocalQueues
# (``_SEEN_QUEUES``): their row as read and their usage state, reused while the row's version is
# the same (their status changes with each usage sample and entry penalty, not with every pass).
_SEEN_NAMESPACES: dict[str, dict[int, tuple[int, dict[str, Any], engine.UsageState]]] = {}


def _namespace_rows(
    unit: AdmissionUnit, in_unit: Any, versioned: bool
) -> list[tuple[dict[str, Any], engine.UsageState]]:
    """The unit's namespace rows with their usage state (one query; unchanged rows reused by
    version: one query for the versions, one for the changed rows if any)."""
    rows = Namespace.objects.filter(id__in=in_unit).order_by()
    columns = (*_NAMESPACE_COLUMNS, *_STATUS_FIELDS)
    if not versioned:
        _SEEN_NAMESPACES.pop(unit.key, None)
        return [(row, _usage_state(row)) for row in rows.values(*columns)]
    seen = _SEEN_NAMESPACES.get(unit.key)
    kept: dict[int, tuple[int, dict[str, Any], engine.UsageState]] = {}
    to_read = rows
    if seen:
        changed = []
        for pk, version in rows.annotate(row_version=_row_version("queues_namespace")).values_list("id", "row_version"):
            entry = seen.get(pk)
            if entry is not None and entry[0] == version:
                kept[pk] = entry
            else:
                changed.append(pk)
        to_read = rows.filter(id__any_of=changed) if changed else rows.none()  # none: no query
    for row in to_read.annotate(row_version=_row_version("queues_namespace")).values(*columns, "row_version"):
        version = row.pop("row_version")
        kept[row["id"]] = (version, row, _usage_state(row))
    _SEEN_NAMESPACES[unit.key] = kept
    return [(row, state) for _, row, state in kept.values()]


# Admitted workloads a unit cannot evict are loaded as totals: key prefix of those entries (a
# namespace is a DNS label, so no real ``namespace/name`` key starts with it).
AGGREGATE_PREFIX = "~admitted/"


def _individual_local_queues(
    loaded: LoadedSnapshot, lq_rows: list[dict[str, Any]], cq_rows: list[dict[str, Any]], holds: tuple[engine.Hold, ...]
) -> set[int] | None:
    """LocalQueues whose admitted workloads the engine may evict, so must see one by one.

    None means every one of them: some ClusterQueue of the unit may preempt (within itself,
    ExceedWeight included, by reclaim within the cohort, or TimeAware reclaim, which also needs
    reclaim enabled; a namespace preempting within its quota is checked by the caller), and any
    running workload of the unit could be a victim. Otherwise only the LocalQueues that drain
    (a HoldAndDrain stop policy on them or their ClusterQueue, or a draining hold on them,
    their namespace or their ClusterQueue).
    """
    if any(
        row["preemption_within_cluster_queue"] != engine.PREEMPT_NEVER
        or row["reclaim_within_cohort"] != engine.PREEMPT_NEVER
        for row in cq_rows
    ):
        return None
    draining_cqs = {row["name"] for row in cq_rows if row["stop_policy"] == engine.STOP_HOLD_AND_DRAIN}
    drains = {(hold.target_kind, hold.target) for hold in holds if hold.drain}
    individual = set()
    for row in lq_rows:
        key = f"{row['namespace__name']}/{row['name']}"
        if (
            row["stop_policy"] == engine.STOP_HOLD_AND_DRAIN
            or row["cluster_queue__name"] in draining_cqs
            or ("localQueue", key) in drains
            or ("namespace", row["namespace__name"]) in drains
            or ("clusterQueue", row["cluster_queue__name"]) in drains
        ):
            individual.add(row["id"])
    return individual


@dataclass(frozen=True, slots=True)
class _Seen:
    """A pending workload as a previous pass of this process read it."""

    created_at: datetime
    local_queue_id: int
    version: int | None  # the row's version (PostgreSQL's xmin) when read; None on SQLite
    workload: engine.Workload


# Pending workloads as the engine sees them, per unit, from the previous pass of this process.
# On PostgreSQL a pass first reads each candidate row's version (``xmin``, which every UPDATE
# of the row changes) and reuses what it read before for every row whose version did not
# change, reading in full only new and changed rows. Their pod sets cannot change after
# submission either, so a changed row whose queue, priority and queue timestamp are the same
# keeps its engine workload and only pod sets of workloads not seen before are decoded. An
# entry is reused only for the same submission (id and creation time: an id alone may come
# back after a rolled-back insert on SQLite). Each pass replaces its unit's entry, so the cache
# never outgrows the pending work.
_SEEN: dict[str, dict[int, _Seen]] = {}

_ROW_COLUMNS = (
    "id",
    "local_queue_id",
    "name",
    "priority",
    "queued_at",
    "state",
    "admitted_at",
    "cluster_queue_id",
    "created_at",
)


def _versions_identify_rows() -> bool:
    """Whether a row's version (``xmin``) may stand for its contents in this transaction.

    ``xmin`` names the transaction that wrote the row version. Once that transaction has
    committed it writes nothing more, so a version seen again means the same contents. A row
    the current transaction wrote could change again under the same version, so while the
    current transaction has written anything (it has a transaction id) versions are neither
    trusted nor recorded: everything is read. A pass reads before it writes, so its reads can
    always use them. PostgreSQL only (SQLite rows have no version).
    """
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT txid_current_if_assigned() IS NULL")
        return bool(cursor.fetchone()[0])


def database_clock() -> int | None:
    """The database server's clock now, in microseconds (one query); None on SQLite. One clock for
    every process: what happened before a reading is visible to statements after a later one."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT (extract(epoch from clock_timestamp()) * 1000000)::bigint")
        return int(cursor.fetchone()[0])


def _row_version(table: str = "queues_workload") -> RawSQL:
    """A row's version on PostgreSQL: the transaction that wrote it (``xmin``)."""
    return RawSQL(f"{table}.xmin::text::bigint", ())


@dataclass(frozen=True, slots=True)
class _SeenQueue:
    """A LocalQueue as a previous snapshot of this process read it, and as the engine sees it."""

    version: int | None
    row: dict[str, Any]
    queue: engine.LocalQueue
    usage: engine.UsageState
    historical: Mapping[str, float] | None


# LocalQueues per unit from this process's previous snapshot, reused by row version (their
# names, namespace and ClusterQueue names are compared as read): thousands per unit, whose
# status changes with each usage sample and entry penalty, not with every pass.
_SEEN_QUEUES: dict[str, dict[int, _SeenQueue]] = {}

_LQ_COLUMNS = (
    "id",
    "name",
    "namespace_id",
    "namespace__name",
    "cluster_queue__name",
    "weight",
    "stop_policy",
    "historical_share",
    *_STATUS_FIELDS,
)


def _local_queues(unit: AdmissionUnit, versioned: bool) -> list[_SeenQueue]:
    """The unit's LocalQueues, in id order; unchanged ones reused from the previous snapshot."""
    rows = LocalQueue.objects.filter(cluster_queue_id__in=unit.cluster_queue_ids).order_by()  # sorted here
    seen = _SEEN_QUEUES.get(unit.key, {})
    unchanged: dict[int, _SeenQueue] = {}
    to_read = rows
    if versioned and seen:
        changed = []
        for pk, version, namespace, cluster_queue in rows.annotate(
            row_version=_row_version("queues_localqueue")
        ).values_list("id", "row_version", "namespace__name", "cluster_queue__name"):
            entry = seen.get(pk)
            if (
                entry is not None
                and entry.version == version
                and entry.row["namespace__name"] == namespace
                and entry.row["cluster_queue__name"] == cluster_queue
            ):
                unchanged[pk] = entry
            else:
                changed.append(pk)
        to_read = rows.filter(id__any_of=changed) if changed else rows.none()  # none: no query
    columns = (*_LQ_COLUMNS, "row_version") if versioned else _LQ_COLUMNS
    if versioned:
        to_read = to_read.annotate(row_version=_row_version("queues_localqueue"))
    for row in to_read.values(*columns):
        share = row["historical_share"]
        unchanged[row["id"]] = _SeenQueue(
            version=row.pop("row_version", None),
            row=row,
            queue=_local_queue(row),
            usage=_usage_state(row),
            historical=engine.frozen_map({k: float(v) for k, v in share.items()}) if share else None,
        )
    _SEEN_QUEUES[unit.key] = unchanged if versioned else {}
    return [unchanged[pk] for pk in sorted(unchanged)]


def _workloads(
    loaded: LoadedSnapshot,
    unit: AdmissionUnit,
    lq_rows: list[dict[str, Any]],
    individual: set[int] | None,
    versioned: bool,
) -> tuple[engine.Workload, ...]:
    """Pending workloads one by one; admitted ones one by one where evictable, else as totals."""
    lq_keys = {row["id"]: (row["namespace__name"], f"{row['namespace__name']}/{row['name']}") for row in lq_rows}
    cq_names = {pk: name for name, pk in loaded.cluster_queue_ids.items()}
    states = [WorkloadState.PENDING, WorkloadState.ADMITTED] if individual is None else [WorkloadState.PENDING]
    base = Workload.objects.filter(local_queue_id__any_of=sorted(lq_keys), state__in=states).order_by()
    if individual:
        base = base | Workload.objects.filter(local_queue_id__any_of=sorted(individual), state=WorkloadState.ADMITTED)
    seen = _SEEN.get(unit.key, {})
    pending_only = individual is not None and not individual
    if versioned and seen and pending_only:
        reused = _reuse_all(loaded, unit, base, lq_keys, seen)
        if reused is not None:
            return _with_totals(loaded, unit, reused, lq_keys, cq_names, individual, versioned)
    sums = [0, 0, 0, 0] if versioned and pending_only else []
    unchanged: dict[int, _Seen] = {}
    to_read = base
    if versioned and seen:  # nothing seen yet (a new worker): one read of everything, versions included
        changed = []
        for pk, state, version in base.annotate(row_version=_row_version()).values_list("id", "state", "row_version"):
            if sums:
                _add_version(sums, pk, version)
            entry = seen.get(pk)
            if (
                state == WorkloadState.PENDING
                and entry is not None
                and entry.version == version
                and entry.local_queue_id in lq_keys
                and entry.workload.local_queue == lq_keys[entry.local_queue_id][1]
            ):
                unchanged[pk] = entry
            else:
                changed.append(pk)
        to_read = base.filter(id__any_of=changed) if changed else base.none()  # none: no query
    columns = (*_ROW_COLUMNS, "row_version") if versioned else _ROW_COLUMNS
    rows = list(
        (to_read.annotate(row_version=_row_version()) if versioned else to_read).values_list(*columns).order_by("id")
    )
    if sums and not (seen and versioned):
        for row in rows:
            _add_version(sums, row[0], row[-1])
    fresh: dict[int, engine.Workload] = {}
    unknown = []
    for pk, lq_id, name, priority, queued_at, state, _admitted_at, _cq, created_at, *_ in rows:
        cached = seen.get(pk)
        known = cached.workload if cached is not None and cached.created_at == created_at else None
        if (
            state == WorkloadState.PENDING
            and known is not None
            and known.key == f"{lq_keys[lq_id][0]}/{name}"
            and known.local_queue == lq_keys[lq_id][1]
            and known.priority == priority
            and known.queued_at == queued_at.timestamp()
        ):
            fresh[pk] = known
        else:
            unknown.append(pk)
    # A workload whose job already exists on a cluster (imported from it, or placed there
    # before) is bound to that cluster: its link's cluster, read with the details (a join).
    details = (
        {
            pk: (pod_sets, assignment, priority_class, bound)
            for pk, pod_sets, assignment, priority_class, bound in Workload.objects.filter(
                id__any_of=unknown
            ).values_list("id", "pod_sets", "flavor_assignment", "priority_class", "cluster_job__cluster__name")
        }
        if unknown
        else {}
    )
    workloads = []
    workload_ids = loaded.workload_ids
    frozen = engine.frozen_map
    kept: dict[int, _Seen] = {}
    read = {row[0]: row for row in rows}
    for pk in sorted((*unchanged, *read)) if unchanged else read:
        entry = unchanged.get(pk)
        if entry is not None:
            workload_ids[entry.workload.key] = pk
            workloads.append(entry.workload)
            kept[pk] = entry
            continue
        (
            lq_id,
            name,
            priority,
            queued_at,
            state,
            admitted_at,
            cq_id,
            created_at,
            *version,
        ) = read[pk][1:]
        if pk not in fresh and pk not in details:
            continue  # deleted between the two reads: it is not there to plan
        namespace, lq_key = lq_keys[lq_id]
        key = f"{namespace}/{name}"
        workload_ids[key] = pk
        admitted = state == WorkloadState.ADMITTED
        workload = fresh.get(pk)
        if workload is None:
            pod_sets, assignment, priority_class, bound = details[pk]
            workload = engine.Workload(
                key=key,
                local_queue=lq_key,
                requests=frozen(total_requests(pod_sets)),
                priority=priority,
                queued_at=queued_at.timestamp(),
                pod_sets=tuple(
                    engine.PodSet(name=p["name"], count=p["count"], requests=frozen(p["requests"])) for p in pod_sets
                ),
                admitted=admitted,
                admitted_at=admitted_at.timestamp() if admitted and admitted_at else None,
                cluster_queue=cq_names.get(cq_id) if admitted else None,
                assignment=frozen(assignment if admitted else None),
                priority_class=priority_class,
                bound_cluster=(bound or "") if not admitted else "",
            )
        if not admitted:
            kept[pk] = _Seen(created_at, lq_id, version[0] if version else None, workload)
        workloads.append(workload)
    _SEEN[unit.key] = loaded.seen = kept
    loaded.seen_sums = sums
    _SEEN_SUMS[unit.key] = (dict(lq_keys), sums)
    return _with_totals(loaded, unit, workloads, lq_keys, cq_names, individual, versioned)


def _with_totals(
    loaded: LoadedSnapshot,
    unit: AdmissionUnit,
    workloads: list[engine.Workload],
    lq_keys: Mapping[int, tuple[str, str]],
    cq_names: Mapping[int, str],
    individual: set[int] | None,
    versioned: bool,
) -> tuple[engine.Workload, ...]:
    if individual is not None:
        workloads.extend(_admitted_totals(loaded, unit, lq_keys, cq_names, individual, versioned))
    return tuple(workloads)


def _stored_reasons(loaded: LoadedSnapshot, workloads: Iterable[engine.Workload]) -> None:
    """The stored reasons of the pending workloads loaded (one query, narrow rows: a reason by
    reference has no sentence of its own), into ``loaded.current_reasons``.

    Read with versions (``loaded.versioned``), the same pending workloads as this process's
    previous pass of the unit left them (``_REASONS``, kept by ``remember_pass``) cost one
    aggregate of the reason rows' versions instead: equal sums mean the same rows at the same
    versions, so the same reasons (``_version_sums``). Whoever writes a reason row (another
    process's pass, an eviction) changes its version, and the next pass reads them all.
    """
    ids = loaded.workload_ids
    keys = {ids[workload.key]: workload.key for workload in workloads if not workload.admitted}
    loaded.pending_ids = frozenset(keys)
    if not keys:
        return
    current = loaded.current_reasons
    rows = WorkloadReason.objects.filter(workload_id__any_of=list(keys))
    if loaded.versioned:
        cached = _REASONS.get(loaded.unit.key)
        if (
            cached is not None
            and cached.ids == loaded.pending_ids
            and cached.sums() == _version_sums(rows, "queues_workloadreason")
        ):
            current.update(cached.current)
            loaded.reason_versions = dict(cached.versions)
            return
        rows = rows.annotate(row_version=_row_version("queues_workloadreason"))
    # The shortages as text, decoded once per distinct text: a reason by reference has none
    # ("[]"), and the ones of a queue's head and its neighbours repeat.
    decoded: dict[str | None, list[dict[str, Any]]] = {None: [], "[]": []}
    versions = loaded.reason_versions
    columns = ("workload_id", "code", "message", "behind_id", "shortages_text")
    for pk, code, message, behind, text, *version in rows.annotate(
        shortages_text=Cast("shortages", TextField())
    ).values_list(*columns, *(("row_version",) if loaded.versioned else ())):
        shortages = decoded.get(text)
        if shortages is None:
            shortages = decoded[text] = json.loads(text) or []
        current[keys[pk]] = (code, message, behind, shortages)
        if version:
            versions[pk] = version[0]


@dataclass
class _Reasons:
    """The stored reasons of a unit's pending workloads as this process's last pass left them."""

    ids: frozenset[int]  # the pending workloads (with a reason row or not)
    versions: dict[int, int]  # workload id -> the version of its reason row, where it has one
    current: dict[str, StoredReason]  # by workload key, as ``LoadedSnapshot.current_reasons``

    def sums(self) -> list[int]:
        """What ``_version_sums`` gives over these reason rows."""
        sums = [0, 0, 0, 0]
        for pk, version in self.versions.items():
            _add_version(sums, pk, version)
        return sums


_REASONS: dict[str, _Reasons] = {}


# Per unit, from this process's previous pass: the LocalQueues its pending workloads were checked
# against, and the version sums of those rows (``_version_sums``; ``LoadedSnapshot.seen_sums``
# is the same list, which the writer keeps up to date).
_SEEN_SUMS: dict[str, tuple[dict[int, tuple[str, str]], list[int]]] = {}


# A version is 32 bits (xmin), so (id mod 2^31 - 1) x version stays within a bigint.
_MIX = 2**31 - 1


def _add_version(sums: list[int], pk: int, version: int) -> None:
    sums[0] += 1
    sums[1] += pk
    sums[2] += version
    sums[3] += (pk % _MIX) * version


def _version_sums(rows: Any, table: str = "queues_workload") -> list[int]:
    """Count, sum of ids, of versions, and of id x version (``_add_version``) over ``rows``: one
    aggregate in the database (it visits the rows, as their versions are in the rows).

    A version is the id of the transaction that wrote the row, newer than every one before it
    (until the 32-bit ids wrap around), so a row rewritten, or rows entering the set as many as
    leave it, raise the sum of versions, and rows leaving lower the count: equal sums mean the
    same rows at the same versions (the other two sums guard the wraparound)."""
    sql, params = (
        rows.annotate(row_version=_row_version(table))
        .values_list("pk", "row_version")
        .order_by()
        .query.sql_with_params()
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), coalesce(sum(t.id), 0), coalesce(sum(t.row_version), 0), "
            f"coalesce(sum(mod(t.id, {_MIX}) * t.row_version), 0) FROM ({sql}) AS t(id, row_version)",
            params,
        )
        return [int(value) for value in cursor.fetchone()]


def _reuse_all(
    loaded: LoadedSnapshot,
    unit: AdmissionUnit,
    base: Any,
    lq_keys: Mapping[int, tuple[str, str]],
    seen: dict[int, _Seen],
) -> list[engine.Workload] | None:
    """Every pending workload as the previous pass of this process left it, when nothing changed:
    the same LocalQueues, and the rows' version sums as that pass read them (one
    aggregate instead of a version per row). None when anything differs: read as usual."""
    cached = _SEEN_SUMS.get(unit.key)
    if cached is None or not cached[1] or cached[0] != lq_keys or cached[1] != _version_sums(base):
        return None
    workload_ids = loaded.workload_ids
    workloads = []
    for pk, entry in seen.items():  # in id order, as the pass that read them stored them
        workload = entry.workload
        workload_ids[workload.key] = pk
        workloads.append(workload)
    loaded.seen, loaded.seen_sums = seen, cached[1]
    return workloads


# Admitted totals per unit from this process's previous pass, keyed by what they were built
# from: the version sums of every admitted row summed (``_version_sums``, PostgreSQL), the
# LocalQueues loaded one by one and the names of the unit's queues. Any admission, eviction,
# finish or edit of an admitted row of the unit changes the digest, so the totals are rebuilt
# exactly when they could differ; an unchanged unit costs one aggregate instead of the grouped
# read and thousands of engine entries. The admissions of this process's own pass are added to
# them as they commit (``remember_admissions``), digest included, so they do not cost the next
# pass a rebuild.
@dataclass
class _Totals:
    key: tuple[Any, ...]  # (digest, individual LocalQueues, LocalQueue keys, ClusterQueue names)
    sums: dict[tuple[int, int, tuple[tuple[str, str], ...]], dict[str, int]]  # (lq, cq, assignment)
    count: int  # admitted workloads they stand for
    entries: list[engine.Workload]


_TOTALS: dict[str, _Totals] = {}


def clear_caches() -> None:
    """Forget what previous passes of this process read (the next snapshot reads everything)."""
    _SEEN.clear()
    _SEEN_QUEUES.clear()
    _SEEN_SUMS.clear()
    _TOTALS.clear()
    _REASONS.clear()
    _SEEN_NAMESPACES.clear()


def _admitted_totals(
    loaded: LoadedSnapshot,
    unit: AdmissionUnit,
    lq_keys: Mapping[int, tuple[str, str]],
    cq_names: Mapping[int, str],
    individual: set[int],
    versioned: bool = False,
) -> list[engine.Workload]:
    """Admitted requests summed per LocalQueue, ClusterQueue and flavor assignment: one entry each.

    The planner only sums what runs (quota per flavor and resource, namespace usage, allocation
    on every path), and sums do not care how they are split, so one grouped query over the
    admitted rows (workloads of one shape counted together) stands in for every workload.
    """
    rows = Workload.objects.filter(cluster_queue_id__in=unit.cluster_queue_ids, state=WorkloadState.ADMITTED)
    if individual:
        rows = rows.exclude(local_queue_id__any_of=sorted(individual))
    digest = tuple(_version_sums(rows)) if versioned else None
    cache_key = (digest, frozenset(individual), tuple(sorted(lq_keys.items())), tuple(sorted(cq_names.items())))
    cached = _TOTALS.get(unit.key)
    if digest is not None and cached is not None and cached.key == cache_key:
        loaded.aggregated += cached.count
        loaded.totals = cached
        return list(cached.entries)
    sums: dict[tuple[int, int, tuple[tuple[str, str], ...]], dict[str, int]] = defaultdict(dict)
    # Read as text and decoded once per distinct text: most running work shares a few shapes.
    decoded: dict[str | None, Any] = {}

    def decode(text: str | None) -> Any:
        if text not in decoded:
            decoded[text] = json.loads(text) if text else {}
        return decoded[text]

    count = 0
    for lq_id, cq_id, assignment_text, pod_sets_text, workloads in (
        rows.annotate(
            assignment_text=Cast("flavor_assignment", TextField()), pod_sets_text=Cast("pod_sets", TextField())
        )
        .values_list("local_queue_id", "cluster_queue_id", "assignment_text", "pod_sets_text")
        .annotate(workloads=Count("id"))
        .order_by()
    ):
        if lq_id not in lq_keys:
            continue
        count += workloads
        group = sums[(lq_id, cq_id, tuple(sorted(decode(assignment_text).items())))]
        for resource, amount in total_requests(decode(pod_sets_text)).items():
            group[resource] = group.get(resource, 0) + amount * workloads
    totals = _Totals(cache_key, dict(sums), count, _total_entries(sums, lq_keys, cq_names))
    loaded.aggregated += count
    if digest is not None:
        _TOTALS[unit.key] = loaded.totals = totals
    return list(totals.entries)


def _total_entries(
    sums: Mapping[tuple[int, int, tuple[tuple[str, str], ...]], Mapping[str, int]],
    lq_keys: Mapping[int, tuple[str, str]],
    cq_names: Mapping[int, str],
) -> list[engine.Workload]:
    """One admitted engine workload per (LocalQueue, ClusterQueue, assignment) total, in key order."""
    return [
        engine.Workload(
            key=f"{AGGREGATE_PREFIX}{index}",
            local_queue=lq_keys[lq_id][1],
            requests=engine.frozen_map(dict(sorted(requests.items()))),
            admitted=True,
            cluster_queue=cq_names.get(cq_id),
            assignment=engine.frozen_map(dict(assignment)),
        )
        for index, ((lq_id, cq_id, assignment), requests) in enumerate(sorted(sums.items()))
    ]


def remember_pass(loaded: LoadedSnapshot, admitted: Iterable[engine.Admission]) -> None:
    """Carry what this pass wrote into this process's caches of the unit: the reasons as stored
    now (``_REASONS``), and its admissions, so the next pass neither rebuilds the admitted
    totals nor rereads every pending row's version.

    Call it inside the pass's transaction, after its last write: the claimed rows then carry
    this transaction's id as their version (``xmin``), which the digests add. The entries only
    count when the next pass's aggregates equal them: a rollback, a savepoint (its rows carry
    another id) or any other change to those rows makes them differ, and that pass reads as
    usual. Only for a snapshot read with versions (``LoadedSnapshot.versioned``). One query
    when something was admitted, none otherwise.
    """
    if not loaded.versioned:
        return
    admitted = list(admitted)
    _remember_reasons(loaded, admitted)
    if not admitted:
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT mod(txid_current(), 4294967296)")  # the 32-bit id that xmin holds
        version = int(cursor.fetchone()[0])
    key = loaded.unit.key
    totals = loaded.totals
    by_key = {workload.key: workload for workload in loaded.snapshot.workloads}
    seen, sums = dict(loaded.seen), list(loaded.seen_sums)
    for admission in admitted:
        pk = loaded.workload_ids[admission.workload]
        entry = seen.pop(pk, None)
        if entry is None or entry.version is None or len(sums) != 4:
            seen, sums = {}, []
        else:  # it left the pending rows
            sums[0] -= 1
            sums[1] -= pk
            sums[2] -= entry.version
            sums[3] -= (pk % _MIX) * entry.version
        if totals is None:
            continue
        lq_id = loaded.local_queue_ids[admission.local_queue]
        if lq_id in totals.key[1]:  # a LocalQueue loaded one by one: not in the totals
            continue
        digest = list(totals.key[0])
        _add_version(digest, pk, version)
        group = totals.sums.setdefault(
            (lq_id, loaded.cluster_queue_ids[admission.cluster_queue], tuple(sorted(admission.assignment.items()))),
            {},
        )
        for resource, amount in by_key[admission.workload].requests.items():
            group[resource] = group.get(resource, 0) + amount
        totals.count += 1
        totals.key = (tuple(digest), *totals.key[1:])
    if totals is not None and _TOTALS.get(key) is totals:
        lq_keys = dict(totals.key[2])
        totals.entries = _total_entries(totals.sums, lq_keys, dict(totals.key[3]))
    if sums and seen:
        _SEEN[key] = seen
        _SEEN_SUMS[key] = (_SEEN_SUMS.get(key, ({}, []))[0], sums)
    else:
        _SEEN_SUMS.pop(key, None)


def _remember_reasons(loaded: LoadedSnapshot, admitted: list[engine.Admission]) -> None:
    """The reasons of the workloads still pending after this pass, as stored now."""
    gone = {loaded.workload_ids[admission.workload] for admission in admitted}
    names = {admission.workload for admission in admitted}
    _REASONS[loaded.unit.key] = _Reasons(
        loaded.pending_ids - gone,
        {pk: version for pk, version in loaded.reason_versions.items() if pk not in gone},
        {key: reason for key, reason in loaded.current_reasons.items() if key not in names},
    )


def _holds(loaded: LoadedSnapshot) -> tuple[engine.Hold, ...]:
    lq_names = {pk: key for key, pk in loaded.local_queue_ids.items()}
    ns_names = {pk: name for name, pk in loaded.namespace_ids.items()}
    cq_names = {pk: name for name, pk in loaded.cluster_queue_ids.items()}
    holds = []
    cq_ids = loaded.unit.cluster_queue_ids
    in_unit = LocalQueue.objects.filter(cluster_queue_id__in=cq_ids)
    rows = QueueHold.objects.filter(
        Q(local_queue__cluster_queue_id__in=cq_ids)
        | Q(namespace_id__in=in_unit.values("namespace_id"))
        | Q(cluster_queue_id__in=cq_ids)
    )
    for row in rows.order_by("id").values(
        "local_queue_id", "namespace_id", "cluster_queue_id", "code", "message", "drain"
    ):
        if row["local_queue_id"]:
            kind, target = "localQueue", lq_names[row["local_queue_id"]]
        elif row["namespace_id"]:
            kind, target = "namespace", ns_names[row["namespace_id"]]
        else:
            kind, target = "clusterQueue", cq_names[row["cluster_queue_id"]]
        holds.append(
            engine.Hold(target_kind=kind, target=target, code=row["code"], message=row["message"], drain=row["drain"])
        )
    return tuple(holds)
