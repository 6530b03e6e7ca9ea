"""Set-based SQL helpers: many rows in a fixed number of statements, on PostgreSQL and SQLite.

A loop that touches many rows hands them to the database as one table (``rows_cte``) and joins
against it (``UPDATE ... FROM``, ``INSERT ... SELECT``), instead of one statement per row. On
PostgreSQL the rows travel as one array per column (``unnest``): three parameters whatever the
row count, so the statement is parsed once. SQLite gets a ``VALUES`` list in chunks that stay
under its parameter limit.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from django.db import connection

# SQLite allows 32,766 parameters per statement; PostgreSQL's arrays have no such limit.
_SQLITE_PARAMETERS = 30_000
_POSTGRES_CHUNK = 50_000


def rows_cte(name: str, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]) -> tuple[str, list[Any]]:
    """``name(col, ...) AS (...)`` holding ``rows``, for a ``WITH`` clause; with its parameters.

    ``columns`` are ``(name, PostgreSQL type)``; a ``jsonb`` value is passed as a Python object
    and stored as JSON; ``timestamptz`` values are aware datetimes. ``rows`` must not be empty.
    """
    if not rows:
        raise ValueError("rows_cte needs at least one row")
    names = ", ".join(column for column, _ in columns)
    types = [kind for _, kind in columns]
    if connection.vendor == "postgresql":
        arrays: list[list[Any]] = [[] for _ in columns]
        for row in rows:
            for index, value in enumerate(row):
                arrays[index].append(json.dumps(value) if types[index] == "jsonb" else value)
        casts = ", ".join(f"%s::{'text' if kind == 'jsonb' else kind}[]" for kind in types)
        selected = ", ".join(
            f"{column}::jsonb" if kind == "jsonb" else column for column, kind in columns
        )
        return f"{name}({names}) AS (SELECT {selected} FROM unnest({casts}) AS _u({names}))", arrays
    placeholders = "(" + ", ".join(["%s"] * len(columns)) + ")"
    params: list[Any] = []
    for row in rows:
        for index, value in enumerate(row):
            params.append(_sqlite_value(value, types[index]))
    return f"{name}({names}) AS (VALUES {', '.join([placeholders] * len(rows))})", params


def _sqlite_value(value: Any, kind: str) -> Any:
    if kind == "jsonb":
        return json.dumps(value)
    if isinstance(value, datetime):
        return connection.ops.adapt_datetimefield_value(value)
    return value


def chunks(rows: Sequence[Sequence[Any]], width: int) -> Iterator[Sequence[Sequence[Any]]]:
    """``rows`` in slices one statement can carry (``width`` columns each)."""
    size = _POSTGRES_CHUNK if connection.vendor == "postgresql" else max(1, _SQLITE_PARAMETERS // max(1, width))
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def execute_with_rows(
    sql: str, name: str, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]], params: Sequence[Any] = ()
) -> list[tuple[Any, ...]]:
    """Run ``WITH <rows> <sql>`` once per chunk of ``rows``; the rows any ``RETURNING`` gave back.

    ``sql`` names the rows table ``name``; ``params`` are its own placeholders, after the rows'.
    """
    returned: list[tuple[Any, ...]] = []
    with connection.cursor() as cursor:
        for chunk in chunks(rows, len(columns)):
            cte, cte_params = rows_cte(name, columns, chunk)
            cursor.execute(f"WITH {cte} {sql}", [*cte_params, *params])
            if cursor.description:
                returned.extend(cursor.fetchall())
    return returned


def json_value(value: Any) -> Any:
    """A JSON column read through a raw cursor: text on both backends here, decoded."""
    return json.loads(value) if isinstance(value, (str, bytes)) else value
