"""The one YAML reader for anything a user sends: no anchors or aliases, bounded size and depth.

PyYAML's ``safe_load`` builds ``*alias`` references as shared objects, so a few hundred bytes of
nested ``&a [...]``/``*a`` ("billion laughs") become an object whose repr, JSON or deep copy is
gigabytes. Scenarios and Kueue manifests never need anchors, so they are refused outright (merge
keys ``<<: *a`` included) with the line they are on; nesting deeper than ``MAX_DEPTH`` and texts
larger than the caller's bound are refused too. Errors are ``yaml.MarkedYAMLError``s, so callers
that already report YAML syntax errors report these the same way.

Pure Python (the engine's rule): the scenario loader, the playground, ``--set`` values, Kueue
import and the fair-sharing config file all read YAML through here.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_DEPTH = 64  # scenarios and manifests nest about 8 deep; PyYAML's composer recurses per level
DEFAULT_MAX_BYTES = 5 * 1024 * 1024


class YAMLRefused(yaml.MarkedYAMLError):
    """A YAML text this project will not read (anchors, aliases, too deep, too large)."""

    def __init__(self, problem: str, mark: Any = None) -> None:
        super().__init__(problem=problem, problem_mark=mark)

    def __str__(self) -> str:
        mark = self.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        return f"{self.problem}{where}"


class _BoundedSafeLoader(yaml.SafeLoader):
    """``SafeLoader`` that refuses anchors and aliases and caps nesting while composing."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise YAMLRefused("YAML anchors and aliases (&name, *name, <<: *name) are not allowed", event.start_mark)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise YAMLRefused(f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _check_size(text: str | bytes, max_bytes: int) -> None:
    size = len(text) if isinstance(text, bytes) else len(text.encode("utf-8"))
    if size > max_bytes:
        raise YAMLRefused(f"the YAML text is {size:,} bytes; at most {max_bytes:,} are accepted")


def load(text: str | bytes, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """One YAML (or JSON) document; raises ``yaml.YAMLError`` (``YAMLRefused`` for the rules above)."""
    _check_size(text, max_bytes)
    loader = _BoundedSafeLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def load_all(text: str | bytes, *, max_bytes: int = DEFAULT_MAX_BYTES) -> list[Any]:
    """Every document of a multi-document YAML text, same rules as ``load``."""
    _check_size(text, max_bytes)
    loader = _BoundedSafeLoader(text)
    try:
        documents = []
        while loader.check_data():
            documents.append(loader.get_data())
        return documents
    finally:
        loader.dispose()


def nested_too_deeply(value: Any, max_depth: int = MAX_DEPTH) -> bool:
    """Whether parsed data (JSON bodies, stored documents) nests deeper than ``max_depth``
    mappings and lists: the same cap as YAML texts, checked before anything copies or walks
    the data recursively (``copy.deepcopy`` of ~600 levels is a RecursionError). Iterative,
    and it stops at the first branch past the cap."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > max_depth:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list, tuple)))
    return False
