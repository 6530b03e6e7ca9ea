"""Database locks that serialise work on one admission unit across processes and machines.

PostgreSQL: transaction-scoped advisory locks (released at commit or rollback, so a crashed
worker never leaves one behind). SQLite serialises writers itself (the settings open every
transaction IMMEDIATE), so the lock is a no-op there.
"""

from __future__ import annotations

import hashlib

from django.db import connection


def lock_key(name: str) -> int:
    """A stable signed 64-bit key for ``name`` (Python's ``hash`` is salted per process)."""
    digest = hashlib.blake2b(name.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def advisory_xact_lock(name: str) -> None:
    """Block until this transaction holds the lock ``name``; must run inside ``atomic()``."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [lock_key(name)])


def advisory_xact_locks(names: list[str]) -> None:
    """Block until this transaction holds every lock of ``names``, taken in the order given.

    One statement whatever the count (a pass locks all namespaces of its unit). Callers pass
    the names in one global order (sorted), so two transactions never wait on each other in a
    circle.
    """
    if connection.vendor != "postgresql" or not names:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_advisory_xact_lock(k)) FROM unnest(%s::bigint[]) WITH ORDINALITY AS t(k, i)",
            [[lock_key(name) for name in names]],
        )


def try_advisory_xact_lock(name: str) -> bool:
    """Take the lock ``name`` if free; False when another transaction holds it."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [lock_key(name)])
        return bool(cursor.fetchone()[0])
