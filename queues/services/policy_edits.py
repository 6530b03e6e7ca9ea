"""Audited edits of policy objects from the web UI: one validation path, one audit row per save.

``save_policy`` locks the stored row, takes the before-picture, validates the object and its
quota rows with the models' ``full_clean()`` (the rules the API, the admin and the scenario
loader enforce), writes, and records a ``PolicyChange`` with the after-picture, all in one
transaction. Invalid input raises ``ValidationError`` naming the field and writes nothing.

(The REST API branch brings ``queues.services.policy.save_policy_object`` with the same shape;
once both are merged, this module should delegate to it.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models, transaction

from queues.audit import policy_state, record_change
from queues.models import Cohort, PolicyChange, Surface

# The foreign key from a quota row to its owner, per owner model.
QUOTA_OWNER_FIELD = {"clusterqueue": "cluster_queue", "cohort": "cohort", "namespace": "namespace"}


def save_policy(
    instance: models.Model,
    *,
    quotas: Sequence[models.Model] | None = None,
    actor: Any,
    surface: str = Surface.UI,
    note: str = "",
) -> PolicyChange | None:
    """Update ``instance`` (and replace its quota rows when ``quotas`` is given); returns the audit
    row, or None when nothing changed."""
    model = type(instance)
    with transaction.atomic():
        stored = model.objects.select_for_update().get(pk=instance.pk)
        before = policy_state(stored)
        if isinstance(instance, Cohort):
            # A re-parenting walks the tree: hold every cohort so two edits cannot create a cycle.
            list(Cohort.objects.select_for_update().values_list("pk", flat=True))
        instance.full_clean()
        if quotas is not None:
            _validate_rows(instance, quotas)
        instance.save()
        if quotas is not None:
            _replace_rows(instance, quotas)
        after = policy_state(model.objects.get(pk=instance.pk))
        return record_change(
            instance=instance,
            action=PolicyChange.Action.UPDATE,
            before=before,
            after=after,
            actor=actor,
            surface=surface,
            note=note,
        )


def _validate_rows(owner: models.Model, rows: Sequence[models.Model]) -> None:
    owner_field = QUOTA_OWNER_FIELD[owner._meta.model_name or ""]
    seen: set[tuple[Any, str]] = set()
    for row in rows:
        row.full_clean(exclude=[owner_field], validate_unique=False, validate_constraints=False)
        identity = (getattr(row, "flavor_id", None), row.resource)
        if identity in seen:
            raise ValidationError({"quotas": f"{row.resource} is listed twice for the same flavor"})
        seen.add(identity)


def _replace_rows(owner: models.Model, rows: Sequence[models.Model]) -> None:
    owner_field = QUOTA_OWNER_FIELD[owner._meta.model_name or ""]
    related = owner.quotas  # type: ignore[attr-defined]
    related.all().delete()
    for row in rows:
        row.pk = None
        setattr(row, owner_field, owner)
    related.model.objects.bulk_create(rows)
