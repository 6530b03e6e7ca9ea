"""Audit trail: a JSON picture of a policy object before and after a change, and its row."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

from django.db import models

from queues.fields import format_for_humans
from queues.models import PolicyChange, Surface

# Status and bookkeeping fields are not policy: changing them is not audited.
_NOT_POLICY = {
    "id",
    "created_at",
    "consumed_resources",
    "entry_penalty",
    "usage_last_update",
    "weighted_share",
    "historical_share",
    "stop_level",  # who set a stop: the audit row's actor already says it
    "stopped_by",
}


def _json_value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return format(value.normalize(), "f") if value == value.to_integral() else str(value.normalize())
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, models.Model):
        return str(value)
    return value


def policy_state(instance: models.Model | None) -> dict[str, Any] | None:
    """The policy-relevant fields of ``instance`` (and its quota rows) as JSON-safe values."""
    if instance is None:
        return None
    state: dict[str, Any] = {}
    for field in instance._meta.concrete_fields:
        if field.name in _NOT_POLICY:
            continue
        if isinstance(field, models.ForeignKey):
            related = getattr(instance, field.name)
            state[field.name] = str(related) if related is not None else None
        else:
            state[field.name] = _json_value(getattr(instance, field.attname))
    quotas = getattr(instance, "quotas", None)
    if quotas is not None and instance.pk is not None:
        state["quotas"] = [_quota_row(row) for row in quotas.all()]
    return state


def _quota_row(row: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"resource": row.resource}
    if hasattr(row, "flavor_id"):
        data["flavor"] = row.flavor_id and str(row.flavor)
    for name in ("nominal", "borrowing_limit", "lending_limit", "hard"):
        if hasattr(row, name):
            value = getattr(row, name)
            data[name] = None if value is None else format_for_humans(value, row.resource)
    if hasattr(row, "flavor_order"):
        data["flavor_order"] = row.flavor_order
    return data


def record_change(
    *,
    instance: models.Model,
    action: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    actor: Any = None,
    surface: str = Surface.SYSTEM,
    note: str = "",
) -> PolicyChange | None:
    """Write one audit row; an update that changed nothing writes none."""
    if action == PolicyChange.Action.UPDATE and before == after:
        return None
    user = actor if getattr(actor, "is_authenticated", False) else None
    return PolicyChange.objects.create(
        actor=user,
        actor_name=getattr(user, "username", "") if user else "",
        surface=surface,
        action=action,
        object_type=instance._meta.model_name or type(instance).__name__,
        object_id=str(instance.pk or ""),
        object_repr=str(instance)[:200],
        before=before,
        after=after,
        note=note,
    )
