"""Set-based SQL helpers: many rows in one statement, on PostgreSQL and SQLite.

A loop that touches many rows hands them to the database as one table (``rows_cte``) and joins
against it (``UPDATE ... FROM``, ``INSERT ... SELECT``), instead of one statement per row. The
rows travel as one JSON document, a single parameter whatever the row count, which the
database expands (PostgreSQL ``jsonb_to_recordset``, SQLite ``json_each``): the client quotes one
string instead of thousands of values, and the server parses the statement once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from django.db import connection, models
from django.db.models import Lookup


def _encoder(kind: str, postgres: bool) -> Callable[[Any], Any] | None:
    """How a column's Python values go into the JSON document (None: as they are)."""
    if kind == "timestamptz":
        if postgres:
            return lambda value: value.isoformat() if isinstance(value, datetime) else value
        return lambda value: connection.ops.adapt_datetimefield_value(value) if isinstance(value, datetime) else value
    if kind == "jsonb" and not postgres:
        return json.dumps  # SQLite keeps JSON columns as text: the value stays that text
    return None


def rows_cte(name: str, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]) -> tuple[str, list[Any]]:
    """``name(col, ...) AS (...)`` holding ``rows``, for a ``WITH`` clause; with its one parameter.

    ``columns`` are ``(name, PostgreSQL type)``, e.g. ``("id", "bigint")``; a ``jsonb`` value is
    any JSON-able Python object, a ``timestamptz`` value an aware datetime.
    """
    postgres = connection.vendor == "postgresql"
    names = ", ".join(column for column, _ in columns)
    keys = [f"c{i}" for i in range(len(columns))]
    encoders = [(index, encode) for index, (_, kind) in enumerate(columns) if (encode := _encoder(kind, postgres))]
    records = []
    for row in rows:
        values = list(row)
        for index, encode in encoders:
            values[index] = encode(values[index])
        records.append(dict(zip(keys, values)))
    document = json.dumps(records)
    if postgres:
        declared = ", ".join(f"{key} {kind}" for key, (_, kind) in zip(keys, columns))
        return f"{name}({names}) AS (SELECT {', '.join(keys)} FROM jsonb_to_recordset(%s::jsonb) AS _r({declared}))", [
            document
        ]
    selected = ", ".join(f"json_extract(value, '$.{key}')" for key in keys)
    return f"{name}({names}) AS (SELECT {selected} FROM json_each(%s))", [document]


def execute_with_rows(
    sql: str, name: str, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]], params: Sequence[Any] = ()
) -> list[tuple[Any, ...]]:
    """Run ``WITH <rows> <sql>``; the rows any ``RETURNING`` gave back (nothing to do: no query).

    ``sql`` names the rows table ``name``; ``params`` are its own placeholders, after the rows'.
    """
    if not rows:
        return []
    cte, cte_params = rows_cte(name, columns, rows)
    own = [
        connection.ops.adapt_datetimefield_value(value) if isinstance(value, datetime) else value for value in params
    ]  # as the ORM stores them (SQLite keeps datetimes as text in its own format)
    with connection.cursor() as cursor:
        cursor.execute(f"WITH {cte} {sql}", [*cte_params, *own])
        return cursor.fetchall() if cursor.description else []


def json_value(value: Any) -> Any:
    """A JSON column read through a raw cursor: text on both backends here, decoded."""
    return json.loads(value) if isinstance(value, (str, bytes)) else value


class AnyOf(Lookup):
    """``field__any_of=[...]``: membership in a list sent as one parameter, not one per item.

    PostgreSQL gets ``= ANY(%s)`` with an array (the planner uses the index with every value);
    SQLite a ``json_each`` of the list. For the lists of thousands of ids a pass or a sample
    filters by, where ``__in`` would send thousands of placeholders.
    """

    lookup_name = "any_of"
    prepare_rhs = False

    def get_db_prep_lookup(self, value: Any, connection: Any) -> tuple[str, list[Any]]:  # type: ignore[override]  # the stubs want a tuple of params; Django takes any sequence
        return "%s", [list(value)]

    def as_postgresql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        return f"{lhs} = ANY(%s)", [*lhs_params, list(self.rhs)]

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:  # type: ignore[override]  # as above
        lhs, lhs_params = self.process_lhs(compiler, connection)
        return f"{lhs} IN (SELECT value FROM json_each(%s))", [*lhs_params, json.dumps(list(self.rhs))]


models.Field.register_lookup(AnyOf)
models.ForeignObject.register_lookup(AnyOf)  # relations keep lookups of their own
