"""Versions of policy objects, for safe concurrent edits: the API's ``ETag`` / ``If-Match``
(``core.api.etags``) and the edit forms' hidden ``version`` field.

- ``version_of(instance, access)``: the object's version, a hash of its stored state: every
  concrete field (foreign keys by id) and its quota rows, except the live fields the control
  loop rewrites on every pass (``LIVE_FIELDS``), so a write by any surface (API, pages, admin,
  Kueue import, playground) changes it and a usage sample does not. Fields a viewer may not read
  (``core.redaction.STAFF_ONLY_FIELDS``) are left out of its version: a tenant cannot tell from
  the version that a staff-only field changed.
- ``lock_current(instance, access)``: inside a transaction, lock the stored row
  (``SELECT ... FOR UPDATE``), reload ``instance`` from it and answer its version. A writer that
  compares the version it was given with this answer, and writes in the same transaction, cannot
  lose a concurrent update: a second writer with the same version waits on the lock, then sees
  the first writer's version and is refused.
- ``expecting_version(instance, version, access)``: that comparison and the write's
  transaction, as a block (the edit pages); ``StaleVersion`` when the object changed since.
- ``last_change(instance, access)``: who last changed the object, when, through which surface
  and which fields (the latest ``PolicyChange``), redacted for the viewer, for the refusal.

Lock order: the object's row, then whatever the write locks (``core.audit.audited_write`` locks
the same row again, a no-op in the same transaction). A caller that must take another lock
before the row (a budget's accounting lock) passes ``lock_first``.

Queries: ``version_of`` reads nothing when the quota rows are prefetched (the API's detail
querysets), else one query for them; ``lock_current`` costs three (lock, reload, quota rows).
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import models, transaction
from django.utils import timezone

from core.access import Access
from core.models import PolicyChange, Surface
from core.redaction import redact_policy_state

# Written by the control loop on every sampling pass, never by a policy write: outside the version.
LIVE_FIELDS = frozenset(
    {"consumed_resources", "entry_penalty", "usage_last_update", "weighted_share", "historical_share"}
)
_FORMAT = "v1"  # part of the hash: a change of this encoding changes every version once


def _plain(value: Any) -> Any:
    """A JSON value that is the same for equal stored values however they were read."""
    if isinstance(value, Decimal):
        return format(value.normalize(), "f") if value.is_finite() else str(value)
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.UTC).isoformat() if timezone.is_aware(value) else value.isoformat()
    if isinstance(value, (datetime.date, datetime.time, datetime.timedelta)):
        return str(value)
    return value


def _row_state(row: models.Model, *, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The stored fields of ``row`` by name (foreign keys by id), without its id and the live fields."""
    return {
        field.name: _plain(getattr(row, field.attname))
        for field in row._meta.concrete_fields
        if field.name not in LIVE_FIELDS and field.name not in skip and not field.primary_key
    }


def stored_state(instance: models.Model) -> dict[str, Any]:
    """The fields the version covers, keyed by field name (foreign keys by id), with the quota
    rows (without their ids and owner, in a stable order) under ``quotas`` when the model has them."""
    state = _row_state(instance)
    quotas = getattr(instance, "quotas", None)
    if isinstance(quotas, models.Manager) and instance.pk is not None:
        owner = frozenset(
            field.name
            for field in quotas.model._meta.concrete_fields
            if field.is_relation and field.related_model is type(instance)
        )
        rows = [_row_state(row, skip=owner) for row in quotas.all()]
        state["quotas"] = sorted(rows, key=lambda row: json.dumps(row, sort_keys=True, default=str))
    return state


def object_type(instance: models.Model) -> str:
    """The name ``PolicyChange.object_type`` and the redaction rules use for the model."""
    return instance._meta.model_name or type(instance).__name__.lower()


def version_of(instance: models.Model, access: Access | None = None) -> str:
    """The version of ``instance`` as stored (read it fresh), as ``access`` may see it (None:
    everything): 32 hex digits."""
    state = stored_state(instance)
    if access is not None:
        state = redact_policy_state(access, object_type(instance), state) or {}
    text = json.dumps([_FORMAT, object_type(instance), instance.pk, state], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def lock_current(
    instance: models.Model, access: Access | None = None, *, lock_first: Callable[[], None] | None = None
) -> str:
    """Lock ``instance``'s row and reload it in one query (``SELECT ... FOR UPDATE``; its quota
    rows are read again on their next use) and answer its version. Call it inside the write's
    transaction; raises ``DoesNotExist`` when the row was deleted meanwhile."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("lock_current must run inside the write's transaction")
    if lock_first is not None:
        lock_first()
    instance.refresh_from_db(from_queryset=type(instance)._default_manager.select_for_update())
    return version_of(instance, access)


@dataclass(frozen=True)
class LastChange:
    """The latest audit row of an object, as much of it as the viewer may read."""

    actor: str
    surface: str
    action: str
    at: datetime.datetime
    changed_fields: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "actor": self.actor,
            "surface": self.surface,
            "action": self.action,
            "at": self.at.isoformat().replace("+00:00", "Z"),
            "changed_fields": self.changed_fields,
        }

    def sentence(self) -> str:
        """``admin changed weight and quotas at 2026-11-28 12:03:04 UTC (REST API)``."""
        fields = [name.replace("_", " ") for name in self.changed_fields]
        what = " and ".join([", ".join(fields[:-1]), fields[-1]] if len(fields) > 1 else fields) or "nothing"
        if self.action == PolicyChange.Action.CREATE:
            what = "created it"
        else:
            what = f"changed {what}"
        when = timezone.localtime(self.at).strftime("%Y-%m-%d %H:%M:%S %Z")
        surface = Surface(self.surface).label if self.surface in Surface.values else self.surface
        return f"{self.actor} {what} at {when} ({surface})"


def last_change(instance: models.Model, access: Access | None = None) -> LastChange | None:
    """Who last changed ``instance`` (one query): the latest audit row, its pictures redacted
    for ``access`` before the changed fields are named. Neither the pictures' values nor the
    row's note are given: they may name what the viewer may not read."""
    row = (
        PolicyChange.objects.filter(object_type=object_type(instance), object_id=str(instance.pk))
        .order_by("-id")
        .only("actor_name", "surface", "action", "at", "before", "after")
        .first()
    )
    if row is None:
        return None
    before, after = row.before, row.after
    if access is not None:
        before = redact_policy_state(access, object_type(instance), before)
        after = redact_policy_state(access, object_type(instance), after)
    return LastChange(
        actor=row.actor_name or "the system",
        surface=row.surface,
        action=row.action,
        at=row.at,
        changed_fields=PolicyChange.fields_changed(before, after),
    )


class StaleVersion(Exception):
    """The object changed since the version the writer read; nothing was written."""

    def __init__(self, instance: models.Model, current: str, change: LastChange | None) -> None:
        self.instance = instance
        self.current = current
        self.change = change
        super().__init__(self.sentence())

    def sentence(self) -> str:
        kind = self.instance._meta.verbose_name
        if self.change is None:
            return f"this {kind} was changed after you read it"
        return f"this {kind} was changed after you read it; its last recorded change: {self.change.sentence()}"


def refuse_stale(instance: models.Model, current: str, access: Access | None) -> StaleVersion:
    """The refusal for a write that read another version than ``current``."""
    return StaleVersion(instance, current, last_change(instance, access))


@contextmanager
def expecting_version(
    instance: models.Model,
    version: str,
    access: Access | None = None,
    *,
    lock_first: Callable[[], None] | None = None,
) -> Iterator[None]:
    """A transaction in which ``instance`` is locked, reloaded and at ``version``; raises
    ``StaleVersion`` (before the block runs, so nothing is written) when it is not. Whatever the
    block raises rolls the block back, as any transaction."""
    with transaction.atomic():
        current = lock_current(instance, access, lock_first=lock_first)
        if current != version:
            raise refuse_stale(instance, current, access)
        yield
