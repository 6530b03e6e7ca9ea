"""The admitted-usage counters (``AdmittedUsage``): kept by the transitions, checked, repaired.

Every change of a workload into or out of state Admitted adds or subtracts its resource rows
(``WorkloadResource.amount``) on the counter of its LocalQueue, ClusterQueue and resource, in
the same transaction as the change: ``queues.services.transitions`` (admit, evict, finish,
fail, cancel: every backend, the admission pass and the lifecycle reports go through it) moves
them in its claim statement on PostgreSQL (``delta_sql`` as a data-modifying CTE of the claim's
``UPDATE``), or with ``count`` right after the claim elsewhere. Paths that edit rows by hand (the Django admin) call
``recount`` for the LocalQueues they touched.

**Lock order.** A transition locks the workload rows it claims (its ``UPDATE``), then the
counter rows in key order (``local_queue_id, cluster_queue_id, resource``: the ``INSERT ...
SELECT ... ORDER BY ... ON CONFLICT`` takes them in that order), after the admission pass's
advisory locks and before the status rows its entry penalties touch (docs/architecture.md).
Two transitions therefore meet on counter rows in one global order. The usage sample never
locks a counter row: it reads them, and a transition's counters commit together with its
workload rows, so a sample sees both or neither. ``recount`` and ``check(repair=True)`` lock
the whole table (``EXCLUSIVE``: reads go on, transitions wait), so a transition cannot slip
between the recount's read of the workloads and its write.

Queries: none of its own in a transition on PostgreSQL, ``count`` one statement elsewhere; ``check`` two reads
(and a repair two writes).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from core.bulk import execute_with_rows
from queues.models import AdmittedUsage, WorkloadState

_TABLE = AdmittedUsage._meta.db_table


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


def _lock_table() -> None:
    if connection.vendor == "postgresql":  # SQLite serialises writers itself
        with connection.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {_TABLE} IN EXCLUSIVE MODE")


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


def check(*, repair: bool = False, local_queue_ids: Iterable[int] | None = None) -> list[Difference]:
    """Recompute the counters from the admitted workloads' rows and compare; the differences.

    With ``repair`` the counters of the LocalQueues compared (all, or ``local_queue_ids``) are
    rewritten from the rows, in the same transaction, under the table lock (see the module).
    """
    ids = None if local_queue_ids is None else list(local_queue_ids)
    with transaction.atomic():
        if repair:
            _lock_table()
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


def recount(local_queue_ids: Iterable[int]) -> None:
    """Rewrite the counters of ``local_queue_ids`` from the rows (after an edit by hand)."""
    ids = [pk for pk in local_queue_ids if pk is not None]
    if ids:
        check(repair=True, local_queue_ids=ids)
