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


def try_advisory_xact_lock(name: str) -> bool:
    """Take the lock ``name`` if free; False when another transaction holds it."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [lock_key(name)])
        return bool(cursor.fetchone()[0])
