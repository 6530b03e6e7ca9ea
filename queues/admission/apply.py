"""The admission pass's apply step: the one writer of a pass's decisions, set-based.

``admission.load`` turns rows into the engine's snapshot; this module writes the engine's
``Plan`` back (evictions, admissions, entry penalties, pending reasons, queue order) and the
reasons of the workloads the gates held back, through the set-based state changes of
``services.transitions``. Data only flows down: pass -> load, pass -> plan, pass -> apply.

Reasons are stored apart from the workload rows (``queues.models.reason``) and written only
where their meaning changed: a reason the plan explains by reference to its queue's head
(``Plan.by_reference``) is stored as its code and ClusterQueue, and the shared sentence goes
on the queue's order row, which every pass writes anyway.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from django.conf import settings

from core.bulk import execute_with_rows
from fairshare import types as engine
from fairshare.usage.accounting import node_path
from queues import backends
from queues.models import (
    Cluster,
    ClusterQueue,
    Cohort,
    LocalQueue,
    Namespace,
    PendingOrder,
    ResourceFlavor,
    WorkloadReason,
    WorkloadState,
)
from queues.models.reason import shortage_rows
from queues.services import transitions

if TYPE_CHECKING:
    from queues.admission.load import LoadedSnapshot, StoredReason


@dataclass
class AppliedPlan:
    admitted: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    pending: int = 0
    reasons_written: int = 0
    clusters: dict[int, Cluster] = field(default_factory=dict)  # workload id -> cluster, admitted and evicted


def apply_plan(
    loaded: LoadedSnapshot,
    plan: engine.Plan,
    now: datetime,
    *,
    started_on_admission: bool | None = None,
    gated: Mapping[str, tuple[str, str]] | None = None,
) -> AppliedPlan:
    """Write ``plan`` back, set-based: evictions, admissions (claimed), penalties, reasons, order,
    then the changed reasons of the ``gated`` workloads (held back by a gate: not in line this
    pass, so no queue position).

    Runs inside the pass's transaction and costs a fixed number of statements whatever the
    number of decisions. A claim that fails (the workload was cancelled or finished meanwhile)
    skips that decision only, which can only leave capacity unused.

    Each admission runs on its flavors' cluster (``Workload.cluster``), started at admission
    when that cluster's backend starts on admission (``started_on_admission`` None) or as
    given. The flavors, their clusters and backends are one query (the one that read the
    flavors' ids before there were clusters).
    """
    result = AppliedPlan()
    evicted = set(
        transitions.evict_many(
            [
                transitions.Evict(loaded.workload_ids[e.workload], f"{e.code}: {e.message}", e.code)
                for e in plan.evictions
            ],
            now=now,
        )
    )
    for eviction in plan.evictions:
        (result.evicted if loaded.workload_ids[eviction.workload] in evicted else result.skipped).append(
            eviction.workload
        )

    # One query for the flavors' ids and clusters (with the cluster rows the dispatch after the
    # commit needs): the one that read the flavors' ids before there were clusters.
    flavors = list(ResourceFlavor.objects.select_related("cluster")) if plan.admissions or plan.evictions else []
    flavor_clusters = {flavor.name: flavor.cluster.pk for flavor in flavors}
    clusters = {flavor.cluster.pk: flavor.cluster for flavor in flavors}
    starts = {
        cluster.pk: backends.backend_class(cluster.effective_backend).starts_on_admission
        for cluster in clusters.values()
    }
    if plan.evictions:
        assignments = {w.key: w.assignment for w in loaded.snapshot.workloads if w.admitted}
        for eviction in plan.evictions:
            ran_on = transitions.cluster_of(assignments.get(eviction.workload, {}), flavor_clusters)
            if ran_on is not None and loaded.workload_ids[eviction.workload] in evicted:
                result.clusters[loaded.workload_ids[eviction.workload]] = clusters[ran_on]
    fallback = backends.backend_class(settings.CLUSTER_BACKEND).starts_on_admission  # a flavor without a row
    claims = []
    for a in plan.admissions:
        cluster_id = transitions.cluster_of(a.assignment, flavor_clusters)
        started = (
            started_on_admission
            if started_on_admission is not None
            else (fallback if cluster_id is None else starts.get(cluster_id, fallback))
        )
        claims.append(
            transitions.Admit(
                loaded.workload_ids[a.workload],
                loaded.cluster_queue_ids[a.cluster_queue],
                dict(a.assignment),
                cluster_id=cluster_id,
                started=started,
            )
        )
    claimed = set(
        transitions.admit_many(
            claims, now=now, started=bool(started_on_admission), flavor_ids={f.name: f.pk for f in flavors}
        )
    )
    for claim in claims:
        if claim.workload_id in claimed and claim.cluster_id is not None:
            result.clusters[claim.workload_id] = clusters[claim.cluster_id]
    penalties: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    cohorts = {cq.name: cq.cohort for cq in loaded.snapshot.cluster_queues}
    for admission in plan.admissions:
        if loaded.workload_ids[admission.workload] not in claimed:
            result.skipped.append(admission.workload)
            continue
        result.admitted.append(admission.workload)
        cohort = cohorts.get(admission.cluster_queue)
        chain = loaded.cohort_chain.get(cohort, (cohort,)) if cohort else ()
        namespace = admission.local_queue.split("/", 1)[0]
        for node in node_path(admission.local_queue, namespace, admission.cluster_queue, chain):
            for resource, amount in admission.penalty.items():
                penalties[node][resource] += amount
    _add_penalties(loaded, penalties)
    result.pending = len(plan.pending)
    current = loaded.current_reasons
    changed: dict[str, StoredReason] = {}
    by_reference = plan.by_reference
    queue_ids = loaded.cluster_queue_ids
    for reason in plan.pending:
        shared = by_reference.get(reason.cluster_queue)
        stored: StoredReason = (
            (reason.code, "", queue_ids[reason.cluster_queue], [])
            if shared is not None and reason.message == shared
            else (reason.code, reason.message, None, shortage_rows(reason.shortages))
        )
        if current.get(reason.workload) != stored:
            changed[reason.workload] = stored
    result.reasons_written = write_reasons(loaded, changed)
    _write_order(loaded, plan.pending, now, by_reference, plan.by_reference_shortages)
    if gated is not None:
        result.reasons_written += write_reasons(
            loaded,
            {
                key: (code, message, None, [])
                for key, (code, message) in gated.items()
                if current.get(key) != (code, message, None, [])
            },
        )
    return result


def _add_penalties(loaded: LoadedSnapshot, penalties: Mapping[str, Mapping[str, float]]) -> None:
    """Add entry penalties to the status rows, locking them in a fixed order (as the sampler does).

    Per level: one locking read of the rows concerned, one ``UPDATE ... FROM`` of the sums.
    """
    targets = (
        (Cohort, "cohort", loaded.cohort_ids),
        (ClusterQueue, "clusterQueue", loaded.cluster_queue_ids),
        (Namespace, "namespace", loaded.namespace_ids),
        (LocalQueue, "localQueue", loaded.local_queue_ids),
    )
    for model, kind, ids in targets:
        wanted = {
            ids[name]: penalties[engine.node_id(kind, name)] for name in ids if engine.node_id(kind, name) in penalties
        }
        if not wanted:
            continue
        current = (
            model.objects.select_for_update()
            .filter(id__any_of=sorted(wanted))
            .order_by("id")
            .values_list("id", "entry_penalty")
        )
        rows = []
        for pk, penalty in current:
            merged = dict(penalty or {})
            for resource, amount in wanted[pk].items():
                merged[resource] = merged.get(resource, 0.0) + amount
            rows.append((pk, merged))
        table = model._meta.db_table
        execute_with_rows(
            f"UPDATE {table} SET entry_penalty = p.penalty FROM p WHERE {table}.id = p.id",
            "p",
            (("id", "bigint"), ("penalty", "jsonb")),
            rows,
        )


def write_reasons(loaded: LoadedSnapshot, reasons: Mapping[str, StoredReason]) -> int:
    """Store changed pending reasons (code, own sentence, the ClusterQueue referred to, own
    shortages) in one upsert into the narrow reason table (``INSERT ... SELECT ... ON CONFLICT DO UPDATE``).

    The caller passes only what changed in meaning; a workload no longer pending (cancelled or
    admitted elsewhere meanwhile) is left alone. The workload rows are not written.
    """
    if not reasons:
        return 0
    rows = sorted(  # in id order: the rows are locked in one order, whoever writes them
        (loaded.workload_ids[key], code[:40], message, behind, shortages)
        for key, (code, message, behind, shortages) in reasons.items()
    )
    table = WorkloadReason._meta.db_table
    # On PostgreSQL each written row's new version too (``load.remember_pass`` keeps them).
    versions = f", {table}.xmin::text::bigint" if loaded.versioned else ""
    written = execute_with_rows(
        f"INSERT INTO {table} (workload_id, code, message, behind_id, shortages) "
        "SELECT r.id, r.code, r.message, r.behind, r.shortages FROM r JOIN queues_workload w ON w.id = r.id "
        "WHERE w.state = %s "
        "ON CONFLICT (workload_id) DO UPDATE "
        "SET code = excluded.code, message = excluded.message, behind_id = excluded.behind_id, "
        "shortages = excluded.shortages "
        f"RETURNING {table}.workload_id{versions}",
        "r",
        (("id", "bigint"), ("code", "text"), ("message", "text"), ("behind", "bigint"), ("shortages", "jsonb")),
        rows,
        [WorkloadState.PENDING],
    )
    keys = {loaded.workload_ids[key]: key for key in reasons}
    for pk, *version in written:  # a workload no longer pending was left alone: not stored
        loaded.current_reasons[keys[pk]] = reasons[keys[pk]]
        if version:
            loaded.reason_versions[pk] = version[0]
    return len(written)


def _write_order(
    loaded: LoadedSnapshot,
    pending: Iterable[engine.PendingReason],
    now: datetime,
    by_reference: Mapping[str, str],
    by_reference_shortages: Mapping[str, tuple[engine.Shortage, ...]],
) -> None:
    """Each ClusterQueue's queue order and the sentence its reasons by reference share (with
    the shortages it names), one row per ClusterQueue of the unit, in one upsert."""
    order: dict[str, list[tuple[int, int]]] = {name: [] for name in loaded.cluster_queue_ids}
    for reason in pending:
        order.setdefault(reason.cluster_queue, []).append((reason.position, loaded.workload_ids[reason.workload]))
    PendingOrder.objects.bulk_create(
        [
            PendingOrder(
                cluster_queue_id=loaded.cluster_queue_ids[name],
                workload_ids=[workload_id for _, workload_id in sorted(entries)],
                planned_at=now,
                by_reference=by_reference.get(name, ""),
                by_reference_shortages=shortage_rows(by_reference_shortages.get(name, ())),
            )
            for name, entries in order.items()
            if name in loaded.cluster_queue_ids
        ],
        update_conflicts=True,
        unique_fields=["cluster_queue"],
        update_fields=["workload_ids", "planned_at", "by_reference", "by_reference_shortages"],
    )
