"""Writes of policy objects (flavors, cohorts, ClusterQueues, namespaces, LocalQueues, budgets).

Every write validates with the models' ``clean()`` (the object and each of its quota rows),
changes the database in one transaction and records a PolicyChange with the before and after
picture (``core.audit``, the one audited write path). Validation runs inside the
transaction, after the stored row is locked, so nothing is written when anything is wrong and
two concurrent edits cannot both validate against stale data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import models, transaction
from django.db.models import ProtectedError, RestrictedError

from core.access import access_for
from core.audit import audited_delete, audited_write
from queues.access import may_change_stop, stop_level
from queues.models import (
    Cluster,
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    LocalQueue,
    NamespaceQuota,
    ResourceFlavor,
    StopPolicy,
)
from queues.models.quota import FlavorResourceQuota
from queues.selectors.dependents import dependents_of
from queues.services.errors import FieldErrors, StillUsed, StopLocked

# Related name of the quota rows and the rows' foreign key to their owner, per owner model.
QUOTA_OWNER_FIELD = {"clusterqueue": "cluster_queue", "cohort": "cohort", "namespace": "namespace"}

_M = TypeVar("_M", bound=models.Model)

# A quota row: per flavor and resource (a ClusterQueue's or a cohort's) or per resource (a namespace's).
QuotaRow = FlavorResourceQuota | NamespaceQuota


def save_policy_object(
    instance: _M,
    *,
    quotas: Sequence[QuotaRow] | None = None,
    quotas_field: str = "quotas",
    actor: Any,
    surface: str,
) -> _M:
    """Create or update ``instance`` and, when ``quotas`` is given, replace its quota rows.

    ``quotas`` are unsaved rows without their owner; ``quotas_field`` names them in errors (the
    API calls a namespace's rows ``hard_quota``). Raises ``FieldErrors`` and writes nothing when
    the object or any row is invalid.
    """
    with audited_write(instance, actor=actor, surface=surface):
        if isinstance(instance, Cohort):
            # Cycle checks walk the tree: hold every cohort so two re-parentings cannot cross.
            list(Cohort.objects.select_for_update().values_list("pk", flat=True))
        if isinstance(instance, LocalQueue):
            apply_stop_rule(instance, actor=actor)
        _validate(instance, quotas, quotas_field)
        instance.save()
        if quotas is not None:
            replace_quota_rows(instance, quotas)
    return instance


def apply_stop_rule(queue: LocalQueue, *, actor: Any) -> None:
    """Record who stops ``queue`` (level and user) and refuse a change to a stop set at a higher
    level: an editor may not lift or change an admin's Hold. Call it with the stored row locked;
    every surface writes LocalQueues through here (API, forms, admin, Kueue import, playground).
    ``actor`` None is the system (a command, an import): admin level."""
    stored = LocalQueue.objects.filter(pk=queue.pk).values("stop_policy", "stop_level").first() if queue.pk else None
    old_policy, old_level = (stored["stop_policy"], stored["stop_level"]) if stored else (StopPolicy.NONE, "")
    if queue.stop_policy == old_policy:
        queue.stop_level = old_level if queue.stop_policy != StopPolicy.NONE else ""
        return
    level = stop_level(None if actor is None else access_for(actor), queue.namespace_id)
    if level is None:
        raise StopLocked("your role may not stop, resume or change the stop of this LocalQueue")
    if old_policy != StopPolicy.NONE and not may_change_stop(level, old_level):
        set_by = LocalQueue.objects.filter(pk=queue.pk).values_list("stopped_by", flat=True).first() or "an admin"
        raise StopLocked(
            f"the {old_policy} stop was set by {set_by} ({old_level or 'admin'}); only an admin may lift or change it"
        )
    stopping = queue.stop_policy != StopPolicy.NONE
    queue.stop_level = level if stopping else ""
    queue.stopped_by = getattr(actor, "username", "") if stopping and actor is not None else ""


def _validate(instance: models.Model, quotas: Sequence[QuotaRow] | None, quotas_field: str) -> None:
    errors: dict[str, Any] = {}
    try:
        instance.full_clean()
    except DjangoValidationError as error:
        errors.update(FieldErrors.messages(error))
    if quotas is not None:
        row_errors = _validate_quota_rows(instance, quotas)
        if row_errors:
            errors[quotas_field] = row_errors
        elif isinstance(instance, ClusterQueue):
            problem = mixed_clusters(
                [(row.flavor, row.resource) for row in quotas if isinstance(row, ClusterQueueQuota)]
            )
            if problem:
                errors[quotas_field] = [problem]
    if isinstance(instance, ResourceFlavor) and instance.pk is not None and "cluster" not in errors:
        problem = _moved_flavor_mixes(instance)
        if problem:
            errors["cluster"] = [problem]
    if errors:
        raise FieldErrors(errors)


def mixed_clusters(rows: Sequence[tuple[ResourceFlavor, str]]) -> str | None:
    """Why these (flavor, resource) quota rows of one ClusterQueue cannot be admitted on one
    cluster per workload, or None.

    A workload gets one flavor per resource group (flavors covering the same resources), and
    runs on one cluster; a queue with one resource group may hold flavors of many clusters
    (the flavor chosen picks the cluster), but with several groups every flavor must be on the
    same cluster, or one workload's resources could land on two clusters.
    """
    covered: dict[int, set[str]] = {}
    flavors: dict[int, ResourceFlavor] = {}
    for flavor, resource in rows:
        covered.setdefault(flavor.pk, set()).add(resource)
        flavors[flavor.pk] = flavor
    groups = {frozenset(resources) for resources in covered.values()}
    clusters = {flavor.cluster_id for flavor in flavors.values()}
    if len(groups) <= 1 or len(clusters) <= 1:
        return None
    names = sorted(f"{flavor.name} ({flavor.cluster.name})" for flavor in flavors.values())
    return (
        "flavors of different clusters in more than one resource group: a workload would run on two clusters; "
        f"give every flavor the same resources, or keep the flavors on one cluster ({', '.join(names)[:300]})"
    )


def _moved_flavor_mixes(flavor: ResourceFlavor) -> str | None:
    """Whether moving ``flavor`` to its (new) cluster makes a ClusterQueue holding it mix clusters."""
    stored = ResourceFlavor.objects.filter(pk=flavor.pk).values_list("cluster_id", flat=True).first()
    if stored == flavor.cluster_id:
        return None
    for queue_id in (
        ClusterQueueQuota.objects.filter(flavor=flavor).values_list("cluster_queue_id", flat=True).distinct()
    ):
        rows = [
            (flavor if row.flavor_id == flavor.pk else row.flavor, row.resource)
            for row in ClusterQueueQuota.objects.filter(cluster_queue_id=queue_id).select_related("flavor__cluster")
        ]
        problem = mixed_clusters(rows)
        if problem:
            return f"ClusterQueue {ClusterQueue.objects.get(pk=queue_id).name}: {problem}"
    return None


def _validate_quota_rows(owner: models.Model, rows: Sequence[QuotaRow]) -> dict[str, Any]:
    """Errors of the bad rows only, keyed as DRF keys nested input: by position for a list of
    rows (``{"1": {"nominal": [...]}}``), by resource for a namespace's ``{resource: amount}``
    mapping (``{"cpu": [...]}``)."""
    owner_field = QUOTA_OWNER_FIELD[owner._meta.model_name or ""]
    keyed_by_resource = owner_field == "namespace"
    seen: set[tuple[Any, str]] = set()
    errors: dict[str, Any] = {}
    for index, row in enumerate(rows):
        row_errors: dict[str, list[str]] = {}
        try:
            row.full_clean(exclude=[owner_field])
        except DjangoValidationError as error:
            row_errors = FieldErrors.messages(error)
        flavor_id = row.flavor_id if isinstance(row, FlavorResourceQuota) else None
        identity = (flavor_id, row.resource)
        if identity in seen:
            where = (
                f"{row.flavor.name}/{row.resource}"
                if isinstance(row, FlavorResourceQuota) and flavor_id
                else row.resource
            )
            row_errors.setdefault("resource", []).append(f"{where} is listed more than once")
        seen.add(identity)
        if not row_errors:
            continue
        if keyed_by_resource:
            errors[row.resource] = [message for messages in row_errors.values() for message in messages]
        else:
            errors[str(index)] = row_errors
    return errors


def replace_quota_rows(owner: models.Model, rows: Sequence[QuotaRow]) -> None:
    """``owner``'s quota rows become ``rows`` (unsaved, without their owner); the caller audits."""
    owner_field = QUOTA_OWNER_FIELD[owner._meta.model_name or ""]
    related = owner.quotas  # type: ignore[attr-defined]
    related.all().delete()
    for row in rows:
        setattr(row, owner_field, owner)
    related.model.objects.bulk_create(rows)


def delete_policy_object(instance: models.Model, *, actor: Any, surface: str) -> None:
    """Delete ``instance`` (audited), or raise ``StillUsed`` and write nothing while rows still
    refer to it (``queues.selectors.dependents``: LocalQueues of a ClusterQueue, workloads, admitted
    or not, quota rows on a flavor...). The check runs inside the delete's transaction after the
    row is locked; the database's ``PROTECT`` constraints stay the last word (a row added
    meanwhile refuses the delete the same way)."""
    with transaction.atomic():
        list(type(instance)._default_manager.select_for_update().filter(pk=instance.pk).values_list("pk", flat=True))
        if isinstance(instance, Cluster) and instance.from_settings:
            raise StillUsed("The default cluster (from the settings) cannot be deleted.")
        refusal = dependents_of(instance).sentence()
        if refusal:
            raise StillUsed(refusal)
        try:
            with transaction.atomic():
                audited_delete(instance, actor=actor, surface=surface)
        except (ProtectedError, RestrictedError) as error:
            users = list(getattr(error, "protected_objects", None) or getattr(error, "restricted_objects", None) or [])
            shown = ", ".join(f"{type(obj)._meta.verbose_name} {obj}" for obj in users[:5])
            raise StillUsed(
                f"Still used by {shown}{', ...' if len(users) > 5 else ''}: delete or move those first."
            ) from None
