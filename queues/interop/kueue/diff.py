"""A flat, comparable picture of a stored object, and the field-by-field difference of two.

Built on the audit picture (``core.audit.policy_state``) so the dry-run diff and the
PolicyChange rows describe a change in the same words. Quota rows become one key per flavor,
resource and limit (``quotas[a100/nvidia.com/gpu].nominal``) so a change shows as one line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db import models

from core.audit import policy_state

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
        flat[key] = _text(value)
    return flat


def changes(before: dict[str, str | None], after: dict[str, str | None]) -> list[FieldChange]:
    """Every field whose text differs, in name order."""
    return [
        FieldChange(key, before.get(key), after.get(key))
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    ]
