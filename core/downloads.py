"""Files the site hands out: CSV a spreadsheet cannot execute, and download names that stay names.

Every CSV export goes through ``csv_text`` and every download through ``attachment``:

- **Formula injection** (OWASP "CSV Injection"): a cell that starts with ``=``, ``+``, ``-``,
  ``@``, a tab or a carriage return is read by Excel, LibreOffice and Google Sheets as a formula
  (``=HYPERLINK(...)`` in a workload name a tenant chose). Such text cells get a leading
  apostrophe, which spreadsheets show as text. Numbers are left alone: ``-300`` as an ``int`` is
  data, not a formula.
- **Content-Disposition** (RFC 6266): the file name is reduced to letters, digits, ``.``, ``_``
  and ``-`` (no quotes, slashes, control characters or CR/LF to break out of the header) and
  capped in length, then written by Django's ``content_disposition_header``.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.http import HttpResponse
from django.utils.http import content_disposition_header

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
MAX_FILENAME = 120
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def neutralise_cell(value: Any) -> Any:
    """The value as a CSV cell: text a spreadsheet would run as a formula is prefixed with ``'``."""
    if isinstance(value, str) and value.startswith(FORMULA_TRIGGERS):
        return "'" + value
    return value


def csv_text(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> str:
    """A CSV document with a header row; missing and ``None`` values are empty cells."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([neutralise_cell(name) for name in columns])
    for row in rows:
        writer.writerow([neutralise_cell("" if row.get(name) is None else row[name]) for name in columns])
    return buffer.getvalue()


def safe_filename(name: str, *, default: str = "download") -> str:
    """``name`` reduced to ``[A-Za-z0-9._-]`` (accents folded to ASCII), never hidden or empty."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    cleaned = _UNSAFE.sub("-", ascii_name).strip(".-")[:MAX_FILENAME].strip(".-")
    return cleaned or default


def name_attachment(response: HttpResponse, filename: str) -> HttpResponse:
    """Mark ``response`` as a download named ``filename`` (sanitised)."""
    response["Content-Disposition"] = content_disposition_header(True, safe_filename(filename))
    return response


def attachment(content: str | bytes, filename: str, content_type: str) -> HttpResponse:
    """A download response of ``content`` named ``filename`` (sanitised)."""
    return name_attachment(HttpResponse(content, content_type=f"{content_type}; charset=utf-8"), filename)
