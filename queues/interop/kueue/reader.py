"""Reading one manifest while remembering which fields were used.

Every field fairportal does not model must be kept and reported, never silently dropped. A
``Reader`` wraps one mapping of the manifest; parsers ``take`` the fields they understand and
``finish`` records the rest, by their full path (``spec.flavorFungibility``), as unknown fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fairshare.errors import MAX_FIELD_CHARS, MAX_MESSAGE_CHARS, clip


@dataclass(frozen=True)
class Problem:
    """One reason a document cannot be imported, with everything needed to find it."""

    index: int  # 1-based position of the document in the file
    kind: str
    name: str
    field: str
    message: str

    def __post_init__(self) -> None:
        """Names and messages come from the manifest: clipped, so a report stays small."""
        for name, limit in (
            ("kind", MAX_FIELD_CHARS),
            ("name", MAX_FIELD_CHARS),
            ("field", MAX_FIELD_CHARS),
            ("message", MAX_MESSAGE_CHARS),
        ):
            object.__setattr__(self, name, clip(str(getattr(self, name)), limit))

    def __str__(self) -> str:
        where = f"document {self.index}" if self.index else "file"
        if self.kind:
            where += f" ({self.kind} {self.name!r})" if self.name else f" ({self.kind})"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class FieldError(Exception):
    """Raised by parsers for a bad field; turned into a ``Problem`` by the caller."""

    def __init__(self, field: str, message: str) -> None:
        self.field = clip(field, MAX_FIELD_CHARS)
        self.message = clip(message, MAX_MESSAGE_CHARS)  # messages quote the manifest: bounded
        super().__init__(f"{self.field}: {self.message}")


def join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


class Reader:
    """A mapping at ``path`` whose untaken keys are collected into ``unknown`` by ``finish``."""

    def __init__(self, data: Any, path: str, unknown: dict[str, Any]) -> None:
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise FieldError(path, f"expected a mapping, got {type(data).__name__}")
        self.data = data
        self.path = path
        self.unknown = unknown
        self._taken: set[str] = set()

    def field(self, key: str) -> str:
        return join(self.path, key)

    def has(self, key: str) -> bool:
        return key in self.data

    def take(self, key: str, default: Any = None) -> Any:
        self._taken.add(key)
        value = self.data.get(key, default)
        return default if value is None else value

    def child(self, key: str) -> Reader:
        """The nested mapping at ``key`` (empty when absent)."""
        self._taken.add(key)
        return Reader(self.data.get(key), self.field(key), self.unknown)

    def items(self, key: str) -> list[tuple[int, Any]]:
        """The list at ``key`` with indices (empty when absent)."""
        self._taken.add(key)
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise FieldError(self.field(key), f"expected a list, got {type(value).__name__}")
        return list(enumerate(value))

    def string(self, key: str, default: str = "") -> str:
        value = self.take(key, default)
        if not isinstance(value, str):
            raise FieldError(self.field(key), f"expected a string, got {value!r}")
        return value

    def choice(self, key: str, allowed: list[str], default: str) -> str:
        value = self.string(key, default)
        if value not in allowed:
            raise FieldError(self.field(key), f"must be one of {', '.join(allowed)}, got {value!r}")
        return value

    def ignore(self, key: str) -> None:
        """Mark ``key`` as handled on purpose (e.g. server-set metadata)."""
        self._taken.add(key)

    def finish(self) -> None:
        for key, value in self.data.items():
            if key not in self._taken:
                self.unknown[join(self.path, str(key))] = value
