"""Aligned plain-text tables, as ``sshare`` and ``squeue`` print them: bounded cells, no colour."""

from __future__ import annotations

from collections.abc import Sequence

from fairportal_cli.client import one_line

MAX_CELL = 60  # characters; longer cells end with an ellipsis (--json has everything)


def cell(value: object, limit: int = MAX_CELL) -> str:
    if value is None or value == "":
        return "-"
    return one_line(str(value), limit)


def render(headers: Sequence[str], rows: Sequence[Sequence[object]], *, last_unbounded: bool = False) -> str:
    """Columns separated by two spaces, left-aligned, the header first; ``last_unbounded`` lets
    the last column (a reason, a list of amounts) run on up to 200 characters."""
    texts = [
        [
            cell(value, 200 if last_unbounded and index == len(headers) - 1 else MAX_CELL)
            for index, value in enumerate(row)
        ]
        for row in rows
    ]
    widths = [max([len(header), *(len(row[index]) for row in texts)]) for index, header in enumerate(headers)]
    lines = ["  ".join(header.ljust(width) for header, width in zip(headers, widths)).rstrip()]
    lines.extend("  ".join(text.ljust(width) for text, width in zip(row, widths)).rstrip() for row in texts)
    return "\n".join(lines) + "\n"
