"""The flat lists as django-tables2 tables: one template, sorting links, column choice, exports.

Each app declares its tables in ``<app>/tables.py`` (NetBox's skeleton); this module is what
they share. Invariants:

- **The selector orders, the table renders.** A list's selector filters (with the app's
  filterset, the API's filter names), orders the *whole* filtered list in the database (or, for
  short lists computed in Python, in Python before paging) and returns one page; the table gets
  those rows as ``OrderedRows``, which never re-sorts them. So page 2 continues page 1's order,
  and ``?sort=<column>`` / ``?sort=-<column>`` means the same on every page.
- **Sort links start at page 1** and keep the filters (``query`` minus ``page``, ``sort``,
  ``live``, ``export``); a sortable header is a link (focusable, works with the keyboard and
  without JavaScript), the sorted one carries ``aria-sort``; every header is ``scope="col"``.
- **Column choice** is a GET form (``?columns=a&columns=b``; ``?columns=default`` resets),
  remembered per table in the session, so it works without JavaScript and follows the user
  from page to page and into the live refresh. Unknown names are ignored, ``required``
  columns cannot be hidden.
- **Exports** (``?export=csv`` or ``?export=json``) are the filtered list in the page's order,
  built by the same selector as the page (so a tenant's export holds exactly the rows its pages
  can show), at most ``EXPORT_LIMIT`` rows; the JSON says ``truncated`` and the ``total``, the
  CSV says it in ``X-Export-*`` headers. Every column is exported (hidden ones too), as plain
  values, through ``core.downloads`` (CSV cells a spreadsheet would run as a formula get a
  leading ``'``; the file name is sanitised).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

import django_tables2 as tables
from django.http import HttpRequest, HttpResponse
from django_tables2.data import TableListData

from core.downloads import attachment, csv_text

EXPORT_LIMIT = 10_000
EXPORT_FORMATS = ("csv", "json")
SESSION_KEY = "fp:columns:"  # + the table's name
# Parameters that are not filters: kept out of sort links, column forms and export links.
NOT_FILTERS = ("page", "sort", "live", "export", "columns")


class BadTableRequest(ValueError):
    """A parameter of a list the page cannot honour (the message names it; answered with 400)."""


class OrderedRows(TableListData):
    """Rows a selector already ordered and paged: shown as they come, never sorted again."""

    def order_by(self, aliases: Any) -> None:
        return None


class ListTable(tables.Table):
    """Base of every flat list. Columns opt in to sorting with ``orderable=True``."""

    key: ClassVar[str] = ""  # the session key of its column choice, and the export's file name
    required: ClassVar[tuple[str, ...]] = ()  # columns that cannot be hidden
    default_hidden: ClassVar[tuple[str, ...]] = ()  # hidden until the user picks them

    class Meta:
        template_name = "includes/list_table.html"
        order_by_field = "sort"
        orderable = False
        attrs = {"class": "grid"}

    def __init__(self, rows: Iterable[Any], *, order_by: str | None = None, **kwargs: Any) -> None:
        super().__init__(OrderedRows(list(rows)), order_by=order_by or None, **kwargs)
        self.sort_query = ""

    @classmethod
    def choosable(cls) -> list[tuple[str, str]]:
        """(name, header) of every column a user may show or hide, in table order."""
        return [
            (name, str(column.verbose_name or name.replace("_", " ").capitalize()))
            for name, column in cls.base_columns.items()
            if column.visible and name not in cls.required
        ]

    @classmethod
    def sortable(cls) -> set[str]:
        return {name for name, column in cls.base_columns.items() if column.orderable}


def sort_alias(value: str | None, allowed: Iterable[str], default: str) -> str:
    """``value`` (``name`` or ``-name``) when it names an allowed order, else ``default``."""
    if value and value.removeprefix("-") in set(allowed):
        return value
    return default


def filter_query(request: HttpRequest) -> str:
    """The current query string without the parameters that are not filters."""
    params = request.GET.copy()
    for name in NOT_FILTERS:
        params.pop(name, None)
    return params.urlencode()


def chosen_columns(request: HttpRequest, table: type[ListTable]) -> list[str]:
    """The columns the user shows (``?columns=`` saved in the session, else the defaults)."""
    key = SESSION_KEY + table.key
    names = [name for name, _header in table.choosable()]
    if "columns" in request.GET:
        picked = request.GET.getlist("columns")[: len(names) + len(table.required) + 1]
        if picked == ["default"]:
            request.session.pop(key, None)
        else:
            request.session[key] = [name for name in names if name in picked]
    saved = request.session.get(key)
    if isinstance(saved, list):
        return [name for name in names if name in saved]
    return [name for name in names if name not in table.default_hidden]


def configure(table: ListTable, request: HttpRequest) -> ListTable:
    """Hide the columns the user did not choose; sort links keep the filters."""
    shown = set(chosen_columns(request, type(table))) | set(table.required)
    for name, _header in type(table).choosable():
        if name not in shown:
            table.columns.hide(name)
    table.sort_query = filter_query(request)
    table.request = request
    return table


def export_format(request: HttpRequest) -> str | None:
    """``csv``, ``json`` or None (no export asked for); anything else is a ``BadTableRequest``."""
    value = request.GET.get("export")
    if value is None:
        return None
    if value not in EXPORT_FORMATS:
        raise BadTableRequest(f"export: choose one of {', '.join(EXPORT_FORMATS)}")
    return value


def _columns(table: ListTable) -> list[Any]:
    return [column for column in table.columns.iterall() if not column.column.exclude_from_export]


def export_values(table: ListTable) -> Iterator[dict[str, Any]]:
    """Each row as {column name: plain value} (``value_<column>`` where the table has one)."""
    columns = _columns(table)
    for row in table.rows:
        yield {column.name: _plain(_value(table, row, column)) for column in columns}


def _value(table: ListTable, row: Any, column: Any) -> Any:
    """The table's ``value_<name>`` when it has one, else the accessor's value (never HTML)."""
    if hasattr(table, f"value_{column.name}"):
        return row.get_cell_value(column.name)
    value = column.accessor.resolve(row.record, quiet=True)
    return column.default if value is None and column.default is not None else value


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    return str(value)


def export_response(table: ListTable, fmt: str, *, total: int, limit: int | None = None) -> HttpResponse:
    """The table's rows as a CSV or JSON download, saying how many of ``total`` it holds."""
    limit = EXPORT_LIMIT if limit is None else limit
    rows = list(export_values(table))
    truncated = total > len(rows)
    filename = f"{table.key or 'export'}.{fmt}"
    columns = _columns(table)
    if fmt == "json":
        document = {
            "columns": [{"name": c.name, "header": str(c.header)} for c in columns],
            "rows": rows,
            "count": len(rows),
            "total": total,
            "limit": limit,
            "truncated": truncated,
        }
        response = attachment(json.dumps(document, ensure_ascii=False), filename, "application/json")
    else:
        headers = {c.name: str(c.header) for c in columns}
        text = csv_text(list(headers.values()), ({headers[k]: v for k, v in row.items()} for row in rows))
        response = attachment(text, filename, "text/csv")
    response["X-Export-Rows"] = str(len(rows))
    response["X-Export-Total"] = str(total)
    response["X-Export-Truncated"] = "true" if truncated else "false"
    return response


def bad_request(error: BadTableRequest) -> HttpResponse:
    return HttpResponse(str(error), status=400, content_type="text/plain; charset=utf-8")


def tools(request: HttpRequest, table: ListTable) -> dict[str, Any]:
    """What ``includes/list_tools.html`` needs: the column form and the export links."""
    shown = {column.name for column in table.columns}
    params = request.GET.copy()
    for name in NOT_FILTERS:
        params.pop(name, None)
    sort = ",".join(table.order_by or ())  # the validated order, not the raw parameter
    kept = [(name, value) for name in params for value in params.getlist(name)]
    return {
        "filters": kept + ([("sort", sort)] if sort else []),
        "required": type(table).required,
        "columns": [(name, header, name in shown) for name, header in type(table).choosable()],
        "query": params.urlencode(),
        "sort": sort,
        "limit": f"{EXPORT_LIMIT:,}",
    }


def page_query(request: HttpRequest) -> str:
    """The query string for paging links: the filters and the order, not the page."""
    params = request.GET.copy()
    for name in ("page", "live", "export", "columns"):
        params.pop(name, None)
    return params.urlencode()
