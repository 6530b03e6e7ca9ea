"""Workload state changes, set-based: each claims the state it expects in one conditional UPDATE.

A change only happens to rows still in the expected state (the UPDATE's ``RETURNING`` says
which), so two workers racing on the same workloads cannot both act on one. Every change is
batched by design (``admit_many``, ``evict_many``, ``finish_many``): a fixed number of
statements whatever the number of workloads, so the admission pass, the simulated cluster and
any other cluster backend share one write path; ``admit``, ``evict`` and ``finish`` are the
one-workload forms of the same calls. Admission intervals are kept in AdmissionRecord rows:
wall time comes from timestamps, never from a running counter.

Each change also moves the claimed workloads' resource rows on the admitted-usage counters
and the workloads on their LocalQueue's admitted and pending counts (``_claim``): on PostgreSQL
in the claim's own statement, elsewhere in the next ones of its transaction (a call outside a
transaction opens one), so the usage sample reads counters, not a join or a count. Lock order:
the claimed workload rows, then their usage counter rows in key order, then their LocalQueues'
count rows in id order (``queues/services/usage_counters.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection, transaction

from core.bulk import execute_with_rows, json_value
from queues.models import AdmissionRecord, Workload, WorkloadState
from queues.models.workload import total_requests
from queues.services import usage_counters

_MESSAGE = 300  # AdmissionRecord.end_message and Workload.last_eviction_reason
_CODE = 40  # WorkloadReason.code


def _seconds_between(start: datetime | None, end: datetime) -> int:
    if start is None:
        return 0
    return max(0, int((end - start).total_seconds()))


def _claim(
    update: str,
    returning: Sequence[str],
    counted: tuple[str, str],
    sign: int,
    pending: int,
    columns: Sequence[tuple[str, str]],
    rows: Sequence[Sequence[Any]],
    params: Sequence[Any],
    *,
    known: Mapping[int, tuple[int, int | None]] | None = None,
    then: tuple[str, Callable[[list[int]], None]] | None = None,
) -> list[tuple[Any, ...]]:
    """Run a claim, ``update`` (``UPDATE queues_workload ... FROM v WHERE <expected state>``,
    without ``RETURNING``), and move the claimed workloads' resource rows on the admitted-usage
    counters by ``sign``, and each claimed workload on its LocalQueue's counts by ``sign``
    admitted and ``pending`` pending; the claimed rows' ``returning`` columns (the workload id first).

    ``counted``: the LocalQueue and ClusterQueue to count under, as expressions over the claimed
    row and ``v``. On PostgreSQL one statement: the counters are data-modifying CTEs over the
    claim's ``RETURNING`` (``usage_counters.delta_sql``, then ``counts_sql``). Elsewhere (SQLite's
    ``RETURNING`` sees only the updated table) two more, ``usage_counters.count`` and ``move``, with ``known``
    ``(LocalQueue, ClusterQueue)`` per workload id when ``counted`` needs ``v``. ``then``: one
    more write over the claimed rows, as SQL over ``claimed`` (its ``out0``: the ids) and ``v``
    for PostgreSQL, folded into the same statement, and as a call with the claimed ids elsewhere.
    """
    outputs = ", ".join(f"{expression} AS out{index}" for index, expression in enumerate(returning))
    lq, cq = counted
    if connection.vendor == "postgresql":
        delta = usage_counters.delta_sql("claimed", sign, id_column="out0", lq="counter_lq", cq="counter_cq")
        names = ", ".join(f"out{index}" for index in range(len(returning)))
        counts = usage_counters.counts_sql("claimed", sign, pending, lq="counter_lq")
        after = f", after AS ({then[0]})" if then is not None else ""
        return execute_with_rows(
            f", claimed AS ({update} RETURNING {outputs}, {lq} AS counter_lq, {cq} AS counter_cq), "
            f"counted AS ({delta}), moved AS ({counts}){after} SELECT {names} FROM claimed",
            "v",
            columns,
            rows,
            params,
        )
    if known is not None:
        claimed = execute_with_rows(f"{update} RETURNING {outputs}", "v", columns, rows, params)
        counters = [(row[0], *known[row[0]]) for row in claimed]
    else:
        returned = execute_with_rows(f"{update} RETURNING {outputs}, {lq}, {cq}", "v", columns, rows, params)
        counters = [(row[0], row[-2], row[-1]) for row in returned]
        claimed = [tuple(row[:-2]) for row in returned]
    usage_counters.count(counters, sign)
    usage_counters.move((local_queue_id, sign, pending) for _, local_queue_id, _ in counters)
    if then is not None:
        then[1]([row[0] for row in claimed])
    return claimed


@dataclass(frozen=True, slots=True)
class Admit:
    """Admit ``workload_id`` into ``cluster_queue_id`` with ``assignment`` (resource -> flavor),
    onto ``cluster_id`` (None: its flavors' cluster, from ``admit_many``'s ``flavor_clusters``),
    started at admission when ``started`` (None: ``admit_many``'s ``started``)."""

    workload_id: int
    cluster_queue_id: int
    assignment: Mapping[str, str] = field(default_factory=dict)
    cluster_id: int | None = None
    started: bool | None = None


@dataclass(frozen=True, slots=True)
class Evict:
    """Send an admitted workload back to pending; ``code`` also becomes its pending reason."""

    workload_id: int
    message: str
    code: str = ""


@dataclass(frozen=True, slots=True)
class Finish:
    """End an admitted workload at ``at`` (which may lie in the past) as ``outcome``."""

    workload_id: int
    at: datetime
    outcome: str = WorkloadState.FINISHED
    message: str = ""
    admitted_at: datetime | None = None  # when the caller read it already; the claim checks it


_END_REASONS = {
    WorkloadState.FINISHED: AdmissionRecord.EndReason.FINISHED,
    WorkloadState.FAILED: AdmissionRecord.EndReason.FAILED,
    WorkloadState.CANCELLED: AdmissionRecord.EndReason.CANCELLED,
}


def admit_many(
    claims: Sequence[Admit],
    *,
    now: datetime,
    started: bool,
    flavor_ids: Mapping[str, int],
    flavor_clusters: Mapping[str, int] | None = None,
) -> list[int]:
    """Pending -> Admitted for every claim whose workload is still pending; the claimed ids.

    Each workload records the cluster it runs on (``Workload.cluster``): the claim's, else the
    cluster of the flavor of its first resource in name order (``flavor_clusters``: flavor name
    -> cluster id; a ClusterQueue's resource groups never mix clusters, see
    ``queues.services.clusters.check_quota_clusters``).

    Three statements whatever the count (five on SQLite): the claim (``UPDATE ... FROM rows
    WHERE state = 'Pending' RETURNING``, the usage counters with it), the admission intervals
    (one ``INSERT ... SELECT FROM rows``), the flavors of the workloads' resource rows
    (``UPDATE ... FROM rows``).
    """
    if not claims:
        return []
    with transaction.atomic(savepoint=False):
        return _admit_many(
            claims, now=now, started=started, flavor_ids=flavor_ids, flavor_clusters=flavor_clusters or {}
        )


def cluster_of(assignment: Mapping[str, str], flavor_clusters: Mapping[str, int]) -> int | None:
    """The cluster an assignment runs on: its first resource's (in name order) flavor's."""
    for resource in sorted(assignment):
        found = flavor_clusters.get(assignment[resource])
        if found is not None:
            return found
    return None


def _admit_many(
    claims: Sequence[Admit],
    *,
    now: datetime,
    started: bool,
    flavor_ids: Mapping[str, int],
    flavor_clusters: Mapping[str, int],
) -> list[int]:
    claimed = _claim(
        """
        UPDATE queues_workload SET state = %s, admitted_at = %s,
               started_at = CASE WHEN v.started = 1 THEN %s ELSE NULL END, cluster_queue_id = v.cq,
               flavor_assignment = v.assignment, wall_time_seconds = 0, cluster_id = v.cluster
          FROM v
         WHERE queues_workload.id = v.id AND queues_workload.state = %s
        """,
        (
            "queues_workload.id",
            "queues_workload.namespace_id",
            "queues_workload.local_queue_id",
            "queues_workload.pod_sets",
        ),
        ("queues_workload.local_queue_id", "queues_workload.cluster_queue_id"),
        1,
        -1,
        (("id", "bigint"), ("cq", "bigint"), ("assignment", "jsonb"), ("cluster", "bigint"), ("started", "bigint")),
        [
            (
                claim.workload_id,
                claim.cluster_queue_id,
                dict(claim.assignment),
                claim.cluster_id if claim.cluster_id is not None else cluster_of(claim.assignment, flavor_clusters),
                int(started if claim.started is None else claim.started),
            )
            for claim in claims
        ],
        [WorkloadState.ADMITTED, now, now, WorkloadState.PENDING],
    )
    by_id = {claim.workload_id: claim for claim in claims}
    execute_with_rows(
        f"INSERT INTO {AdmissionRecord._meta.db_table} (workload_id, namespace_id, local_queue_id, cluster_queue_id, "
        "assignment, requests, admitted_at, end_reason, end_message) "
        "SELECT workload, namespace, local_queue, cluster_queue, assignment, requests, %s, '', '' FROM a",
        "a",
        (
            ("workload", "bigint"),
            ("namespace", "bigint"),
            ("local_queue", "bigint"),
            ("cluster_queue", "bigint"),
            ("assignment", "jsonb"),
            ("requests", "jsonb"),
        ),
        [
            (
                workload_id,
                namespace_id,
                local_queue_id,
                by_id[workload_id].cluster_queue_id,
                dict(by_id[workload_id].assignment),
                total_requests(json_value(pod_sets)),
            )
            for workload_id, namespace_id, local_queue_id, pod_sets in claimed
        ],
        [now],
    )
    flavors = [
        (workload_id, resource, flavor_ids.get(flavor))
        for workload_id, *_ in claimed
        for resource, flavor in by_id[workload_id].assignment.items()
    ]
    if flavors:
        execute_with_rows(
            "UPDATE queues_workloadresource SET flavor_id = f.flavor FROM f "
            "WHERE queues_workloadresource.workload_id = f.workload AND queues_workloadresource.resource = f.resource",
            "f",
            (("workload", "bigint"), ("resource", "text"), ("flavor", "bigint")),
            flavors,
        )
    order = {claim.workload_id: index for index, claim in enumerate(claims)}
    return sorted((row[0] for row in claimed), key=order.__getitem__)


def _admitted(workload_ids: Sequence[int]) -> dict[int, tuple[datetime | None, int, int | None]]:
    """When, from which LocalQueue and into which ClusterQueue each still-admitted workload of
    ``workload_ids`` was admitted (one query)."""
    return {
        pk: (admitted_at, local_queue_id, cluster_queue_id)
        for pk, admitted_at, local_queue_id, cluster_queue_id in Workload.objects.filter(
            pk__any_of=list(workload_ids), state=WorkloadState.ADMITTED
        ).values_list("id", "admitted_at", "local_queue_id", "cluster_queue_id")
    }


def evict_many(evictions: Sequence[Evict], *, now: datetime) -> list[int]:
    """Admitted -> Pending (Kueue's eviction) for each still-admitted workload; the evicted ids.

    The interval closes and its time moves to ``accumulated_past_execution_seconds``. With a
    ``code`` the eviction's reason is also the pending reason until the next pass explains the
    wait (a drained workload says BudgetExhausted at once); without one the pending reason is
    empty ("not evaluated yet"). The claim also checks ``admitted_at``, so an eviction decided
    against one admission never hits the next (and the LocalQueue and ClusterQueue read with it
    are the claimed admission's, for the counters). The reasons are stored apart
    (``WorkloadReason``): one more upsert for the evicted rows.
    """
    with transaction.atomic(savepoint=False):
        return _evict_many(evictions, now=now)


def _evict_many(evictions: Sequence[Evict], *, now: datetime) -> list[int]:
    seen = _admitted([eviction.workload_id for eviction in evictions])
    rows = [
        (
            eviction.workload_id,
            seen[eviction.workload_id][0],
            _seconds_between(seen[eviction.workload_id][0], now),
            eviction.message[:_MESSAGE],
        )
        for eviction in evictions
        if seen.get(eviction.workload_id, (None,))[0] is not None
    ]
    if not rows:
        return []
    claimed = _claim(
        """
        UPDATE queues_workload SET state = %s, admitted_at = NULL, started_at = NULL, cluster_queue_id = NULL,
               flavor_assignment = %s, wall_time_seconds = 0,
               accumulated_past_execution_seconds = accumulated_past_execution_seconds + v.elapsed,
               eviction_count = eviction_count + 1, last_evicted_at = %s, last_eviction_reason = v.reason
          FROM v
         WHERE queues_workload.id = v.id AND queues_workload.state = %s AND queues_workload.admitted_at = v.admitted_at
        """,
        ("queues_workload.id",),
        ("queues_workload.local_queue_id", "v.cq"),  # the ClusterQueue read with admitted_at
        -1,
        1,
        (
            ("id", "bigint"),
            ("admitted_at", "timestamptz"),
            ("elapsed", "integer"),
            ("reason", "text"),
            ("cq", "bigint"),
        ),
        [(*row, seen[row[0]][2]) for row in rows],
        [WorkloadState.PENDING, "{}", now, WorkloadState.ADMITTED],
        known={workload_id: (local_queue_id, cq) for workload_id, (_, local_queue_id, cq) in seen.items()},
    )
    evicted = [row[0] for row in claimed]
    reasons = {e.workload_id: (e.code[:_CODE], e.message if e.code else "") for e in evictions}
    execute_with_rows(
        "INSERT INTO queues_workloadreason (workload_id, code, message, behind_id, shortages) "
        "SELECT id, code, message, NULL, '[]' FROM r WHERE true "
        "ON CONFLICT (workload_id) DO UPDATE SET code = excluded.code, message = excluded.message, behind_id = NULL, "
        "shortages = excluded.shortages",
        "r",
        (("id", "bigint"), ("code", "text"), ("message", "text")),
        [(workload_id, *reasons[workload_id]) for workload_id in evicted],
    )
    messages = {eviction.workload_id: eviction.message for eviction in evictions}
    _close_many(
        [(workload_id, now, AdmissionRecord.EndReason.EVICTED, messages[workload_id]) for workload_id in evicted]
    )
    if evicted:
        from queues.models import WorkloadResource

        WorkloadResource.objects.filter(workload_id__any_of=evicted).update(flavor=None)
    return evicted


def finish_many(finishes: Sequence[Finish]) -> list[int]:
    """Admitted -> Finished/Failed/Cancelled at each ``at`` for each still-admitted workload.

    ``at`` may lie in the past (a late tick or report loses no time) but never before the
    admission. One statement whatever the count on PostgreSQL, after reading ``admitted_at``
    (skipped when every item carries it): claim the workloads (fixing ``wall_time_seconds``;
    the claim matches ``admitted_at``, so a stale value only loses the claim), take them off
    the usage counters and the admitted counts and close their admission intervals (four
    statements on SQLite).
    Returns the ended ids.
    """
    with transaction.atomic(savepoint=False):
        return _finish_many(finishes)


def _finish_many(finishes: Sequence[Finish]) -> list[int]:
    seen: dict[int, datetime | None]
    if all(item.admitted_at is not None for item in finishes):
        seen = {item.workload_id: item.admitted_at for item in finishes}
    else:
        seen = {pk: admitted[0] for pk, admitted in _admitted([item.workload_id for item in finishes]).items()}
    rows = []
    taken: set[int] = set()
    for item in finishes:
        admitted_at = seen.get(item.workload_id)
        if admitted_at is None or item.workload_id in taken:
            continue
        taken.add(item.workload_id)
        at = max(item.at, admitted_at)
        reason = _END_REASONS[item.outcome]  # type: ignore[index]  # a WorkloadState value
        seconds = _seconds_between(admitted_at, at)
        rows.append((item.workload_id, admitted_at, at, item.outcome, seconds, reason, item.message[:_MESSAGE]))
    if not rows:
        return []
    ends = {row[0]: (row[2], row[5], row[6]) for row in rows}
    claimed = _claim(
        """
        UPDATE queues_workload SET state = v.outcome, finished_at = v.at, wall_time_seconds = v.seconds
          FROM v
         WHERE queues_workload.id = v.id AND queues_workload.state = %s AND queues_workload.admitted_at = v.admitted_at
        """,
        ("queues_workload.id",),
        ("queues_workload.local_queue_id", "queues_workload.cluster_queue_id"),
        -1,
        0,
        (
            ("id", "bigint"),
            ("admitted_at", "timestamptz"),
            ("at", "timestamptz"),
            ("outcome", "text"),
            ("seconds", "integer"),
            ("reason", "text"),
            ("message", "text"),
        ),
        rows,
        [WorkloadState.ADMITTED],
        then=(
            "UPDATE queues_admissionrecord SET ended_at = v.at, end_reason = v.reason, end_message = v.message "
            "FROM claimed JOIN v ON v.id = claimed.out0 "
            "WHERE queues_admissionrecord.workload_id = claimed.out0 AND queues_admissionrecord.ended_at IS NULL",
            lambda ids: _close_many([(workload_id, *ends[workload_id]) for workload_id in ids]),
        ),
    )
    finished = [row[0] for row in claimed]
    order = {item.workload_id: index for index, item in enumerate(finishes)}
    return sorted(finished, key=order.__getitem__)


def _close_many(closes: Sequence[tuple[int, datetime, str, str]]) -> None:
    """End the open admission interval of each ``(workload_id, ended_at, reason, message)``."""
    if not closes:
        return
    execute_with_rows(
        "UPDATE queues_admissionrecord SET ended_at = c.ended_at, end_reason = c.reason, end_message = c.message "
        "FROM c WHERE queues_admissionrecord.workload_id = c.workload AND queues_admissionrecord.ended_at IS NULL",
        "c",
        (("workload", "bigint"), ("ended_at", "timestamptz"), ("reason", "text"), ("message", "text")),
        [(workload_id, ended_at, reason, message[:_MESSAGE]) for workload_id, ended_at, reason, message in closes],
    )


# --- one workload at a time: the same calls ----------------------------------------------------


def admit(
    *,
    workload_id: int,
    cluster_queue_id: int,
    assignment: dict[str, str],
    flavor_ids: Mapping[str, int],
    now: datetime,
    started: bool,
) -> bool:
    """Pending -> Admitted, opening an admission interval. False when it was no longer pending."""
    claim = Admit(workload_id, cluster_queue_id, assignment)
    return bool(admit_many([claim], now=now, started=started, flavor_ids=flavor_ids))


def evict(*, workload_id: int, now: datetime, message: str, code: str = "") -> bool:
    """Admitted -> Pending; False when it was no longer admitted."""
    return bool(evict_many([Evict(workload_id, message, code)], now=now))


def finish(*, workload_id: int, at: datetime, outcome: str = WorkloadState.FINISHED, message: str = "") -> bool:
    """Admitted -> Finished/Failed at ``at``; False when it was no longer admitted."""
    return bool(finish_many([Finish(workload_id, at, outcome, message)]))


def close_admission(*, workload_id: int, ended_at: datetime, reason: str, message: str = "") -> None:
    """End the open admission interval of a workload (no-op when none is open)."""
    _close_many([(workload_id, ended_at, reason, message)])
