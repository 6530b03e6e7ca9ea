"""Scenario documents in and out: reading uploads, validating, applying edits, writing YAML.

Validation is the engine's loader (``parse_scenario``), so an uploaded file, a preset, a live
export and an edit are checked by exactly the rules ``manage.py simulate`` applies; every error
is a ``ValidationError`` naming the field path. The playground adds size limits (a run must fit
a worker) and ``edits[i]`` in front of an edit's error so forms and the API can point at it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

import yaml

from fairshare import safe_yaml
from fairshare.errors import ValidationError
from fairshare.simulation.scenario import Scenario, apply_set, parse_scenario

MAX_DOCUMENT_BYTES = 5 * 1024 * 1024
MAX_WORKLOADS = 20_000  # per side of a run, as the API's simulate endpoint
MAX_TICKS = 20_000  # recorded series points per side: horizon / tick
MAX_EDITS = 100


class EditError(Exception):
    """An edit that cannot be applied or makes the scenario invalid.

    ``index`` is the edit's position, ``path`` its ``--set`` path, ``problem`` the engine's
    message (naming the document field when the edit parsed but the result is invalid).
    """

    def __init__(self, index: int, path: str, problem: str) -> None:
        self.index, self.path, self.problem = index, path, problem
        super().__init__(f"edits[{index}] ({path}): {problem}")

    @property
    def field(self) -> str:
        return f"edits[{self.index}]"


def read_text(content: str | bytes, filename: str = "") -> dict[str, Any]:
    """The mapping in an uploaded YAML or JSON text; errors name ``document``."""
    if isinstance(content, bytes):
        if len(content) > MAX_DOCUMENT_BYTES:
            raise ValidationError("document", f"is larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB")
        try:
            content = content.decode("utf-8")
        except UnicodeDecodeError:
            raise ValidationError("document", "is not UTF-8 text") from None
    if len(content.encode("utf-8")) > MAX_DOCUMENT_BYTES:
        raise ValidationError("document", f"is larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB")
    if not content.strip():
        raise ValidationError("document", "is empty")
    try:
        if filename.lower().endswith(".json"):
            document = json.loads(content)
        else:
            document = safe_yaml.load(content, max_bytes=MAX_DOCUMENT_BYTES)  # JSON is YAML too
    except RecursionError:
        raise ValidationError("document", "nested too deeply") from None
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else "syntax error"
        raise ValidationError("document", f"not valid YAML/JSON: {first_line}") from None
    if not isinstance(document, dict):
        raise ValidationError("document", "a scenario must be a mapping at the top level")
    return document


def check_depth(document: Any, field: str = "document") -> None:
    """Refuse data nested deeper than YAML texts may be, before anything copies or walks it."""
    if safe_yaml.nested_too_deeply(document):
        raise ValidationError(field, f"nested deeper than {safe_yaml.MAX_DEPTH} levels")


def validate(document: dict[str, Any]) -> Scenario:
    """The engine's validation plus the playground's limits; returns the parsed scenario."""
    check_depth(document)
    scenario = parse_scenario(document)
    count = workload_count(scenario)
    if count > MAX_WORKLOADS:
        raise ValidationError("workloads", f"at most {MAX_WORKLOADS:,} workloads in a run, got {count:,}")
    clock = scenario.clock
    if clock.horizon_seconds is not None and clock.horizon_seconds // clock.tick_seconds > MAX_TICKS:
        raise ValidationError("clock.tick", f"at most {MAX_TICKS:,} ticks per run (horizon / tick); use a longer tick")
    if clock.horizon_seconds is None and any(w.duration_seconds is None for w in scenario.workloads):
        # The simulator's own rule, checked here so the error comes before a run is queued.
        raise ValidationError("clock.horizon", "is required when a workload has no duration (it would never finish)")
    return scenario


def workload_count(scenario: Scenario) -> int:
    return len(scenario.workloads) + sum(generator.count for generator in scenario.generators)


def apply_edits(document: dict[str, Any], edits: Sequence[str]) -> tuple[dict[str, Any], Scenario]:
    """A copy of ``document`` with ``edits`` applied, and its validated scenario.

    Raises ``EditError`` for the first edit that cannot be applied, or (when the result is
    invalid) for the first edit after which the document no longer validates.
    """
    if len(edits) > MAX_EDITS:
        raise EditError(MAX_EDITS, "", f"at most {MAX_EDITS} edits in one run")
    check_depth(document)
    edited = copy.deepcopy(document)
    for index, edit in enumerate(edits):
        try:
            apply_set(edited, edit)
        except ValidationError as error:
            raise EditError(index, edit_path(edit), error.message) from None
    try:
        return edited, validate(edited)
    except ValidationError as error:
        raise _culprit(document, edits, error) from None


def _culprit(document: dict[str, Any], edits: Sequence[str], error: ValidationError) -> EditError:
    """The first edit after which the document stops validating (re-checked one by one; only
    on the error path, so a valid run parses once)."""
    partial = copy.deepcopy(document)
    for index, edit in enumerate(edits):
        apply_set(partial, edit)
        try:
            validate(partial)
        except ValidationError as problem:
            return EditError(index, edit_path(edit), str(problem))
    return EditError(max(len(edits) - 1, 0), edit_path(edits[-1]) if edits else "", str(error))


def edit_path(edit: str) -> str:
    return edit.split("=", 1)[0].strip()


def clean_edits(lines: Sequence[str]) -> list[str]:
    """Edits as typed: one ``path=value`` per line, blank lines and ``#`` comments dropped."""
    result = []
    for line in lines:
        text = line.strip()
        if text.startswith("--set "):
            text = text[len("--set ") :].strip()
        if text and not text.startswith("#"):
            result.append(text)
    return result


def to_yaml(document: dict[str, Any]) -> str:
    """The document as a scenario file (keys in their written order)."""
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=None, allow_unicode=True, width=110)
