"""A flat, comparable picture of a stored object, and the field-by-field difference of two.

Built on the audit picture (``core.audit.policy_state``) so the dry-run diff and the
PolicyChange rows describe a change in the same words. Quota rows become one key per flavor,
resource and limit (``quotas[a100/nvidia.com/gpu].nominal``) so a change shows as one line, and
so does the text export writes for each quantity (``notation.quotas[a100/memory].nominal``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db import models

from core.audit import policy_state
from queues.interop.kueue.notation import quantity_notation, weight_notation
from queues.interop.kueue.specs import WEIGHT_NOTATION, notation_key

_SKIPPED = {"id", "created_at"}


@dataclass(frozen=True)
class FieldChange:
    field: str
    before: str | None
    after: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.field, "before": self.before, "after": self.after}

    def __str__(self) -> str:
        return f"{self.field}: {self.before if self.before is not None else '(none)'} -> {self.after if self.after is not None else '(none)'}"


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def flat_state(instance: models.Model | None) -> dict[str, str | None]:
    """``{field: text}`` for the policy fields of ``instance`` (and its quota rows)."""
    state = policy_state(instance)
    if state is None:
        return {}
    flat: dict[str, str | None] = {}
    for key, value in state.items():
        if key in _SKIPPED:
            continue
        if key == "quotas":
            for row in value:
                where = f"quotas[{row['flavor']}/{row['resource']}]"
                for limit in ("nominal", "borrowing_limit", "lending_limit", "flavor_order"):
                    if limit in row:
                        flat[f"{where}.{limit}"] = _text(row[limit]) if row[limit] not in ("", None) else None
            continue
        if key == "kueue_notation":
            continue  # compared as the text export writes: _notation below
        flat[key] = _text(value)
    if instance is not None and hasattr(instance, "kueue_notation") and hasattr(instance, "weight"):
        flat.update(_notation(instance))
    return flat


def _notation(instance: Any) -> dict[str, str | None]:
    """The text export writes for each quantity of ``instance`` (one query for its quota rows):
    a change of notation alone (``1Gi`` -> ``1024Mi``) is a change, an export read back is not."""
    stored = instance.kueue_notation or {}
    flat: dict[str, str | None] = {"notation.weight": weight_notation(instance.weight, stored.get(WEIGHT_NOTATION))}
    quotas = getattr(instance, "quotas", None)
    if quotas is None:
        return flat
    for row in quotas.select_related("flavor"):
        for limit in ("nominal", "borrowing_limit", "lending_limit"):
            amount = getattr(row, limit)
            if amount is not None:
                key = notation_key(row.flavor.name, row.resource, limit)
                flat[f"notation.{key}"] = quantity_notation(amount, row.resource, stored.get(key))
    return flat


def changes(before: dict[str, str | None], after: dict[str, str | None]) -> list[FieldChange]:
    """Every field whose text differs, in name order; a notation line only where the amount
    itself (``notation.K``'s ``K``) did not change, which says it already."""
    differing = {key for key in set(before) | set(after) if before.get(key) != after.get(key)}
    return [
        FieldChange(key, before.get(key), after.get(key))
        for key in sorted(differing)
        if not (key.startswith("notation.") and key.removeprefix("notation.") in differing)
    ]
