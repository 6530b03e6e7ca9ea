"""The one audited write path: every change of a policy object (API, pages, admin, Kueue import,
budget enforcement, playground apply) writes one PolicyChange row with the object's picture before
and after, its actor and its surface.

- ``audited_write(instance, ...)``: a block that changes ``instance`` (and its quota rows), in one
  transaction: the stored row is locked and pictured first, the block writes, the fresh row is
  pictured last. ``audited_save`` is the block that only saves.
- ``audited_delete(instance, ...)``: delete and record the picture it had.
- ``Audit``: the same two pictures when the write is split across calls: ``AuditedAdmin`` (the
  Django admin saves the object and its inline quota rows in separate steps), the Kueue import.

An update that changed nothing writes no row. Each row is announced to the webhook endpoints
subscribed to ``policy.changed`` (``core.webhooks.policy_change_recorded``: one query, and a
delivery row per endpoint sent after the commit; nothing when the write rolls back).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.contrib import admin
from django.db import models, transaction
from django.http import HttpRequest

from core import webhooks
from core.formatting import format_for_humans
from core.models import PolicyChange, Surface

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
    # webhook secrets never enter the audit trail (a rotation shows as secret_rotated_at), and a
    # budget's link to its own webhook endpoint is bookkeeping
    "secret",
    "previous_secret",
    "webhook_endpoint",
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
    change = PolicyChange.objects.create(
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
    webhooks.policy_change_recorded(change)
    return change


@dataclass
class Audit:
    """The before picture of one write, recorded with the after picture by ``record``."""

    instance: models.Model
    before: dict[str, Any] | None
    creating: bool

    @classmethod
    def of(cls, instance: models.Model, *, lock: bool = False, stored: bool = True) -> Audit:
        """``instance`` about to be written: pictured as stored, or as it is in memory
        (``stored=False``, when the caller has just read it). With ``lock`` the stored row is
        locked and must exist (``DoesNotExist`` when a concurrent delete won: a write must not
        bring it back); without, no stored row means a creation."""
        if instance.pk is None or instance._state.adding:  # not saved yet (a default pk is no row)
            return cls(instance, None, creating=True)
        if not stored:
            return cls(instance, policy_state(instance), creating=False)
        rows = type(instance)._default_manager.filter(pk=instance.pk)
        current = rows.select_for_update().get() if lock else rows.first()
        return cls(instance, policy_state(current), creating=current is None)

    @classmethod
    def created(cls, instance: models.Model) -> Audit:
        """An object just created by the caller (saved already)."""
        return cls(instance, None, creating=True)

    def record(self, *, actor: Any = None, surface: str = Surface.SYSTEM, note: str = "") -> PolicyChange | None:
        fresh = type(self.instance)._default_manager.get(pk=self.instance.pk)
        return record_change(
            instance=fresh,
            action=PolicyChange.Action.CREATE if self.creating else PolicyChange.Action.UPDATE,
            before=self.before,
            after=policy_state(fresh),
            actor=actor,
            surface=surface,
            note=note,
        )


@contextmanager
def audited_write(
    instance: models.Model, *, actor: Any = None, surface: str = Surface.SYSTEM, note: str = ""
) -> Iterator[Audit]:
    """Lock and picture ``instance``'s stored row, let the block write, audit the result; all in
    one transaction (nothing is recorded when the block raises)."""
    with transaction.atomic():
        audit = Audit.of(instance, lock=True)
        yield audit
        audit.record(actor=actor, surface=surface, note=note)


def audited_save(instance: models.Model, *, actor: Any = None, surface: str = Surface.SYSTEM, note: str = "") -> None:
    """Save ``instance`` and audit it."""
    with audited_write(instance, actor=actor, surface=surface, note=note):
        instance.save()


def audited_delete(
    instance: models.Model, *, actor: Any = None, surface: str = Surface.SYSTEM, note: str = "", stored: bool = True
) -> None:
    """Delete ``instance`` and audit it with the picture it had (the locked stored row, or the
    instance as it is in memory with ``stored=False``); raises ``ProtectedError`` while
    something still uses it."""
    with transaction.atomic():
        before = Audit.of(instance, lock=True, stored=stored).before
        pk = instance.pk
        instance.delete()
        instance.pk = pk  # the audit row names the deleted object's id
        record_change(
            instance=instance,
            action=PolicyChange.Action.DELETE,
            before=before,
            after=None,
            actor=actor,
            surface=surface,
            note=note,
        )


class AuditedAdmin(admin.ModelAdmin):
    """Django admin saves and deletes of policy objects, audited with surface ``admin``: the
    before picture is taken ahead of any write, the after picture once the inline quota rows are
    saved too."""

    def save_model(self, request: HttpRequest, obj: models.Model, form: Any, change: bool) -> None:
        request._audit = Audit.of(obj) if change else Audit.created(obj)  # type: ignore[attr-defined]
        super().save_model(request, obj, form, change)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        request._audit.record(actor=request.user, surface=Surface.ADMIN)  # type: ignore[attr-defined]

    def delete_model(self, request: HttpRequest, obj: models.Model) -> None:
        audited_delete(obj, actor=request.user, surface=Surface.ADMIN, stored=False)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for obj in queryset:
            self.delete_model(request, obj)
