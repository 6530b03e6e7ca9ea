"""The counters the usage sample reads (``AdmittedUsage``, ``WorkloadCount``): kept by the
transitions, checked, repaired.

Every change of a workload into or out of state Admitted adds or subtracts its resource rows
(``WorkloadResource.amount``) on the counter of its LocalQueue, ClusterQueue and resource, in
the same transaction as the change: ``queues.services.transitions`` (admit, evict, finish,
fail, cancel: every backend, the admission pass and the lifecycle reports go through it) moves
them in its claim statement on PostgreSQL (``delta_sql`` as a data-modifying CTE of the claim's
``UPDATE``), or with ``count`` right after the claim elsewhere. Paths that edit rows by hand (the Django admin) call
``recount`` for the LocalQueues they touched.

The workload counters (``WorkloadCount``: admitted and pending workloads per LocalQueue) move
with every change of a workload into or out of state Admitted or Pending, as appended change
rows (``WorkloadCountChange``: a LocalQueue and its two deltas): a claim appends them in the
same statement as it moves the usage counters (``counts_sql``, a second data-modifying CTE:
admit +1 admitted -1 pending, evict -1 admitted +1 pending, finish/fail/cancel of an admitted
workload -1 admitted), and the paths outside the transitions call ``move`` in their
transaction: a submission (+1 pending per new workload, ``queues.services.workloads``), the
cancel of a pending workload (``queues.services.lifecycle``), the demo's seeded workloads. A
LocalQueue's counts are its ``WorkloadCount`` row plus the sum of its change rows
(``COUNTS_SQL``); the usage sample folds the change rows into the counts (``fold``, under its
advisory lock) before it reads them.

**Lock order.** A transition locks the workload rows it claims (its ``UPDATE``), then the
counter rows in key order (``local_queue_id, cluster_queue_id, resource``: the ``INSERT ...
SELECT ... ORDER BY ... ON CONFLICT`` takes them in that order), after the admission pass's
advisory locks and before the status rows its entry penalties touch (docs/architecture.md).
Two transitions therefore meet on counter rows in one global order. Workload count changes
are only inserted, so they lock no row another transaction waits for: they add no edge to
this order, and a submission or the cancel of a pending workload never waits for an admission
pass. ``fold`` deletes the change rows it sees and adds them onto the counts (a row inserted
after its snapshot stays for the next fold; two folds never add one row twice: the second
waits for the first's delete and skips the row); only the sample and ``recount`` write
``WorkloadCount``. The usage sample never locks a counter row: it reads them, and a
transition's counters commit together with its workload rows, so a sample sees both or
neither. ``recount`` and ``check(repair=True)`` lock the three tables (``EXCLUSIVE``: reads
go on, transitions wait) in the order a claim's statement and then a fold name them (usage
counters, count changes, counts), so a transition cannot slip between the recount's read of
the workloads and its write.

Queries: none of its own in a transition on PostgreSQL, ``count`` and ``move`` one statement
each elsewhere (``move`` one statement everywhere); ``fold`` one; ``check`` four reads (and a
repair five writes).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from core.bulk import execute_with_rows
from queues.models import AdmittedUsage, WorkloadCount, WorkloadCountChange, WorkloadState

_TABLE = AdmittedUsage._meta.db_table
_COUNTS = WorkloadCount._meta.db_table
_CHANGES = WorkloadCountChange._meta.db_table


def delta_sql(source: str, sign: int, *, id_column: str = "id", lq: str = "lq", cq: str = "cq") -> str:
    """The ``INSERT ... SELECT ... ON CONFLICT DO UPDATE`` that adds (``sign`` 1) or subtracts
    (-1) the resource rows of the workloads in ``source`` (a table or CTE naming each workload,
    its LocalQueue and its ClusterQueue) on their counters, taking the counter rows in key order.
    """
    if sign not in (1, -1):
        raise ValueError(f"sign must be 1 or -1, got {sign!r}")
    return (
        f"INSERT INTO {_TABLE} (local_queue_id, cluster_queue_id, resource, amount, workloads) "
        f"SELECT d.{lq}, d.{cq}, r.resource, {sign} * SUM(r.amount), {sign} * COUNT(*) "
        f"FROM {source} d JOIN queues_workloadresource r ON r.workload_id = d.{id_column} WHERE true "
        f"GROUP BY d.{lq}, d.{cq}, r.resource ORDER BY d.{lq}, d.{cq}, r.resource "
        "ON CONFLICT (local_queue_id, cluster_queue_id, resource) DO UPDATE "
        f"SET amount = {_TABLE}.amount + excluded.amount, workloads = {_TABLE}.workloads + excluded.workloads"
    )


def count(workloads: Sequence[tuple[int, int, int | None]], sign: int) -> None:
    """Add (``sign`` 1) or subtract (-1) the resource rows of ``workloads`` on their counters.

    ``workloads`` are ``(workload_id, local_queue_id, cluster_queue_id)`` of the workloads a
    transition has just claimed, with the ClusterQueue they are (or were) admitted to. One
    statement (``delta_sql``); must run in the transition's transaction. On PostgreSQL the
    transitions fold the same statement into their claim instead (a data-modifying CTE).
    """
    if not workloads:
        return
    execute_with_rows(delta_sql("d", sign), "d", (("id", "bigint"), ("lq", "bigint"), ("cq", "bigint")), workloads)


def counts_sql(source: str, admitted: int, pending: int, *, lq: str = "lq") -> str:
    """The ``INSERT ... SELECT`` that appends ``admitted`` and ``pending`` (each -1, 0 or 1) per
    workload in ``source`` (a table or CTE naming each workload's LocalQueue in column ``lq``)
    as one change row per LocalQueue."""
    if admitted not in (-1, 0, 1) or pending not in (-1, 0, 1):
        raise ValueError(f"a workload moves by -1, 0 or 1, got {admitted!r}, {pending!r}")
    return (
        f"INSERT INTO {_CHANGES} (local_queue_id, admitted, pending) "
        f"SELECT d.{lq}, {admitted} * COUNT(*), {pending} * COUNT(*) FROM {source} d GROUP BY d.{lq}"
    )


def move(moves: Iterable[tuple[int, int, int]]) -> None:
    """Append ``(local_queue_id, admitted, pending)`` deltas as change rows, one per LocalQueue
    (one statement; none when nothing moves); must run in the transaction of the change."""
    totals: dict[int, list[int]] = {}
    for local_queue_id, admitted, pending in moves:
        total = totals.setdefault(local_queue_id, [0, 0])
        total[0] += admitted
        total[1] += pending
    rows = [(pk, admitted, pending) for pk, (admitted, pending) in sorted(totals.items()) if admitted or pending]
    if not rows:
        return
    execute_with_rows(
        f"INSERT INTO {_CHANGES} (local_queue_id, admitted, pending) SELECT lq, a, p FROM d",
        "d",
        (("lq", "bigint"), ("a", "bigint"), ("p", "bigint")),
        rows,
    )


def fold() -> None:
    """Add the change rows onto the counts and delete them (one statement; see the module for
    why a concurrent change is never lost nor added twice)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"WITH gone AS (DELETE FROM {_CHANGES} RETURNING local_queue_id, admitted, pending) "
                f"INSERT INTO {_COUNTS} (local_queue_id, admitted, pending) "
                "SELECT local_queue_id, SUM(admitted), SUM(pending) FROM gone GROUP BY local_queue_id "
                "ORDER BY local_queue_id "
                f"ON CONFLICT (local_queue_id) DO UPDATE "
                f"SET admitted = {_COUNTS}.admitted + excluded.admitted, pending = {_COUNTS}.pending + excluded.pending"
            )
            return
        # SQLite (one writer at a time): the same in two statements
        cursor.execute(
            f"INSERT INTO {_COUNTS} (local_queue_id, admitted, pending) "
            f"SELECT local_queue_id, SUM(admitted), SUM(pending) FROM {_CHANGES} WHERE true GROUP BY local_queue_id "
            f"ON CONFLICT (local_queue_id) DO UPDATE "
            f"SET admitted = {_COUNTS}.admitted + excluded.admitted, pending = {_COUNTS}.pending + excluded.pending"
        )
        cursor.execute(f"DELETE FROM {_CHANGES}")


COUNTS_SQL = (
    f"SELECT local_queue_id, SUM(admitted) AS admitted, SUM(pending) AS pending FROM ("
    f"SELECT local_queue_id, admitted, pending FROM {_COUNTS} UNION ALL "
    f"SELECT local_queue_id, admitted, pending FROM {_CHANGES}) c{{where}} "
    "GROUP BY local_queue_id HAVING SUM(admitted) <> 0 OR SUM(pending) <> 0"
)
"""Admitted and pending workloads per LocalQueue (``local_queue_id, admitted, pending``) from
the counters; ``{where}``: empty, or `` WHERE ...`` over ``local_queue_id``."""


_FROM_ROWS = (
    "SELECT w.local_queue_id, w.cluster_queue_id, r.resource, SUM(r.amount), COUNT(*) "
    "FROM queues_workload w JOIN queues_workloadresource r ON r.workload_id = w.id "
    "WHERE w.state = %s{where} GROUP BY w.local_queue_id, w.cluster_queue_id, r.resource"
)
_STORED = (
    f"SELECT local_queue_id, cluster_queue_id, resource, SUM(amount), SUM(workloads) FROM {_TABLE}{{where}} "
    "GROUP BY local_queue_id, cluster_queue_id, resource"
)

Key = tuple[int, int | None, str]


@dataclass(frozen=True)
class Difference:
    """One counter that does not match the rows: ``(amount, workloads)`` expected and stored."""

    local_queue_id: int
    cluster_queue_id: int | None
    resource: str
    expected: tuple[int, int]
    stored: tuple[int, int]

    def describe(self) -> str:
        return (
            f"LocalQueue {self.local_queue_id}, ClusterQueue {self.cluster_queue_id}, "
            f"{self.resource}: rows say {self.expected[0]} in {self.expected[1]} workloads, "
            f"counter says {self.stored[0]} in {self.stored[1]}"
        )


@dataclass(frozen=True)
class CountDifference:
    """One LocalQueue whose workload counters do not match the rows: ``(admitted, pending)``
    expected and stored."""

    local_queue_id: int
    expected: tuple[int, int]
    stored: tuple[int, int]

    def describe(self) -> str:
        return (
            f"LocalQueue {self.local_queue_id}: rows say {self.expected[0]} admitted and {self.expected[1]} pending, "
            f"counter says {self.stored[0]} and {self.stored[1]}"
        )


_COUNT_ROWS = (
    "SELECT local_queue_id, COUNT(*) FILTER (WHERE state = %s), COUNT(*) FILTER (WHERE state = %s) "
    "FROM queues_workload WHERE state IN (%s, %s){where} GROUP BY local_queue_id"
)
_COUNT_PARAMS = [WorkloadState.ADMITTED, WorkloadState.PENDING, WorkloadState.ADMITTED, WorkloadState.PENDING]


def _lock_tables() -> None:
    """The usage counters' table, the count changes', the counts' (the order a claim, then a
    fold, names them in)."""
    if connection.vendor == "postgresql":  # SQLite serialises writers itself
        with connection.cursor() as cursor:
            for table in (_TABLE, _CHANGES, _COUNTS):
                cursor.execute(f"LOCK TABLE {table} IN EXCLUSIVE MODE")


def _read_counts(sql: str, params: list[Any]) -> dict[int, tuple[int, int]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {lq: (int(admitted), int(pending)) for lq, admitted, pending in cursor.fetchall() if admitted or pending}


def _read(sql: str, params: list[Any]) -> dict[Key, tuple[int, int]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {
            (lq, cq, resource): (int(amount), int(workloads))
            for lq, cq, resource, amount, workloads in cursor.fetchall()
            if int(amount) or int(workloads)
        }


def _scope(column: str, local_queue_ids: Iterable[int] | None) -> tuple[str, list[Any]]:
    if local_queue_ids is None:
        return "", []
    ids = sorted(set(local_queue_ids))
    return f" AND {column} IN ({', '.join(['%s'] * len(ids)) or 'NULL'})", list(ids)


def check(*, repair: bool = False, local_queue_ids: Iterable[int] | None = None) -> list[Difference | CountDifference]:
    """Recompute the counters from the rows and compare; the differences (the usage counters'
    first, then the workload counters', each in key order).

    With ``repair`` the counters of the LocalQueues compared (all, or ``local_queue_ids``) are
    rewritten from the rows, in the same transaction, under the table locks (see the module).
    """
    ids = None if local_queue_ids is None else list(local_queue_ids)
    with transaction.atomic():
        if repair:
            _lock_tables()
        differences: list[Difference | CountDifference] = list(_check_usage(ids, repair))
        differences += _check_counts(ids, repair)
    return differences


def _check_counts(ids: list[int] | None, repair: bool) -> list[CountDifference]:
    where, params = _scope("local_queue_id", ids)
    expected = _read_counts(_COUNT_ROWS.format(where=where), [*_COUNT_PARAMS, *params])
    stored_where = where.replace(" AND", " WHERE", 1)
    stored = _read_counts(COUNTS_SQL.format(where=stored_where), params)
    differences = [
        CountDifference(key, expected.get(key, (0, 0)), stored.get(key, (0, 0)))
        for key in sorted(set(expected) | set(stored))
        if expected.get(key, (0, 0)) != stored.get(key, (0, 0))
    ]
    if repair and differences:
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {_CHANGES}{stored_where}", params)
            cursor.execute(f"DELETE FROM {_COUNTS}{stored_where}", params)
            cursor.execute(
                f"INSERT INTO {_COUNTS} (local_queue_id, admitted, pending) " + _COUNT_ROWS.format(where=where),
                [*_COUNT_PARAMS, *params],
            )
    return differences


def _check_usage(ids: list[int] | None, repair: bool) -> list[Difference]:
    where, params = _scope("w.local_queue_id", ids)
    expected = _read(_FROM_ROWS.format(where=where), [WorkloadState.ADMITTED, *params])
    stored_where, stored_params = _scope("local_queue_id", ids)
    stored = _read(_STORED.format(where=stored_where.replace(" AND", " WHERE", 1)), stored_params)
    differences = [
        Difference(key[0], key[1], key[2], expected.get(key, (0, 0)), stored.get(key, (0, 0)))
        for key in sorted(set(expected) | set(stored), key=lambda key: (key[0], key[1] or 0, key[2]))
        if expected.get(key, (0, 0)) != stored.get(key, (0, 0))
    ]
    if repair and differences:
        _rewrite(ids, where, params)
    return differences


def _rewrite(local_queue_ids: list[int] | None, where: str, params: list[Any]) -> None:
    delete_where, delete_params = _scope("local_queue_id", local_queue_ids)
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {_TABLE}{delete_where.replace(' AND', ' WHERE', 1)}", delete_params)
        cursor.execute(
            f"INSERT INTO {_TABLE} (local_queue_id, cluster_queue_id, resource, amount, workloads) "
            + _FROM_ROWS.format(where=where),
            [WorkloadState.ADMITTED, *params],
        )


def recount(local_queue_ids: Iterable[int | None]) -> None:
    """Rewrite the counters of ``local_queue_ids`` from the rows (after an edit by hand; None: skipped)."""
    ids = [pk for pk in local_queue_ids if pk is not None]
    if ids:
        check(repair=True, local_queue_ids=ids)
