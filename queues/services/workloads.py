"""Workload submission and its derived per-resource rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import connection, models, transaction
from django.db.models import Q
from django.utils import timezone

from core.bulk import execute_with_rows
from queues.models import LocalQueue, ResourceFlavor, Workload, WorkloadResource
from queues.models.workload import total_requests
from queues.services import usage_counters
from queues.services.pass_requests import request_admission_pass


def sync_workload_resources(workload: Workload) -> None:
    """(Re)build the per-resource rows of a workload from its pod sets."""
    totals = total_requests(workload.pod_sets)
    assignment = workload.flavor_assignment or {}
    flavor_ids = dict(ResourceFlavor.objects.filter(name__in=set(assignment.values())).values_list("name", "id"))
    with transaction.atomic():
        WorkloadResource.objects.filter(workload=workload).exclude(resource__in=list(totals)).delete()
        existing = {row.resource: row for row in WorkloadResource.objects.filter(workload=workload)}
        for resource, amount in totals.items():
            flavor_id = flavor_ids.get(assignment.get(resource, ""))
            row = existing.get(resource)
            if row is None:
                WorkloadResource.objects.create(
                    workload=workload, resource=resource, amount=amount, flavor_id=flavor_id
                )
            elif row.amount != amount or row.flavor_id != flavor_id:
                row.amount, row.flavor_id = amount, flavor_id
                row.save(update_fields=["amount", "flavor"])


_COLUMN_TYPES = {
    "AutoField": "bigint",
    "BigAutoField": "bigint",
    "ForeignKey": "bigint",
    "OneToOneField": "bigint",
    "IntegerField": "bigint",
    "BigIntegerField": "bigint",
    "PositiveIntegerField": "bigint",
    "PositiveBigIntegerField": "bigint",
    "PositiveSmallIntegerField": "bigint",
    "SmallIntegerField": "bigint",
    "CharField": "text",
    "TextField": "text",
    "JSONField": "jsonb",
    "DateTimeField": "timestamptz",
    "BooleanField": "boolean",
}


def insert_rows(model: type[models.Model], objects: Sequence[models.Model], *, key: tuple[str, ...]) -> None:
    """``bulk_create`` as one statement over one JSON document (``core.bulk``): the rows
    travel as one parameter instead of one per value, which is most of bulk_create's time for a
    few hundred rows. Every concrete field but the primary key is written as ``pre_save`` gives
    it (defaults already applied by the constructor); ``key`` (attribute names, unique together)
    maps the returned ids back onto ``objects``."""
    if not objects:
        return
    fields = [field for field in model._meta.concrete_fields if not field.primary_key]
    columns = [(str(field.column), _COLUMN_TYPES[field.get_internal_type()]) for field in fields]
    rows = [[field.pre_save(obj, add=True) for field in fields] for obj in objects]
    names = ", ".join(connection.ops.quote_name(column) for column, _ in columns)
    by_attname = {field.attname: str(field.column) for field in model._meta.concrete_fields}
    key_columns = [by_attname[name] for name in key]
    pk_column = str(model._meta.pk.column) if model._meta.pk is not None else "id"
    returned = execute_with_rows(
        f"INSERT INTO {connection.ops.quote_name(model._meta.db_table)} ({names}) SELECT {names} FROM new_rows "
        f"RETURNING {connection.ops.quote_name(pk_column)}, "
        + ", ".join(connection.ops.quote_name(column) for column in key_columns),
        "new_rows",
        columns,
        rows,
    )
    ids = {tuple(row[1:]): row[0] for row in returned}
    for obj in objects:
        obj.pk = ids[tuple(getattr(obj, name) for name in key)]
        obj._state.adding = False
        obj._state.db = connection.alias


def new_workload(
    local_queue: LocalQueue,
    name: str,
    pod_sets: list[dict[str, Any]],
    *,
    created_at: datetime,
    queued_at: datetime,
    priority: int = 0,
    priority_class: str = "",
    duration_seconds: int | None = None,
    max_runtime_seconds: int | None = None,
) -> Workload:
    """A pending workload of ``local_queue``, not validated or saved yet (``submit_workload``
    does both; the demo seeds many at once)."""
    return Workload(
        namespace=local_queue.namespace,
        local_queue=local_queue,
        name=name,
        priority=priority,
        priority_class=priority_class,
        pod_sets=pod_sets,
        duration_seconds=duration_seconds,
        max_runtime_seconds=max_runtime_seconds,
        created_at=created_at,
        queued_at=queued_at,
    )


def validate_new_workloads(workloads: Sequence[Workload]) -> list[ValidationError | None]:
    """Validate unsaved workloads as ``full_clean`` does, with a few queries for all of them.

    The field and model rules (``clean_fields``, ``clean``) run per workload in memory; the rules
    that need the database (related rows exist, a unique name in the namespace) are checked for
    all of them at once (and between them: the first of two equal names wins). One error (or None) per workload,
    in order. ``submit_workload`` and ``submit_workloads`` both validate through here.
    """
    # Foreign keys: that each row exists is one query per relation for all workloads, not one
    # per field per workload (what clean_fields would run); the other field rules run per row.
    relations = [field for field in Workload._meta.concrete_fields if field.is_relation]
    missing: dict[str, set[Any]] = {}
    for field in relations:
        ids = {getattr(w, field.attname) for w in workloads} - {None}
        target = field.related_model._default_manager  # type: ignore[union-attr]  # a relation has a model
        missing[field.name] = ids - set(target.filter(pk__in=list(ids)).values_list("pk", flat=True)) if ids else set()
    errors: list[ValidationError | None] = []
    for workload in workloads:
        problems: dict[str, list[str]] = {}
        for field in relations:
            if getattr(workload, field.attname) is None and not field.null:
                problems[field.name] = [str(field.error_messages["null"])]
            elif getattr(workload, field.attname) in missing[field.name]:
                value = getattr(workload, field.attname)
                problems[field.name] = [  # ForeignKey.validate's own message
                    str(field.error_messages["invalid"])
                    % {
                        "model": field.related_model._meta.verbose_name,  # type: ignore[union-attr]  # as above
                        "pk": value,
                        "field": field.remote_field.field_name,  # type: ignore[union-attr]  # as above
                        "value": value,
                    }
                ]
        try:
            workload.full_clean(
                exclude=[field.name for field in relations], validate_unique=False, validate_constraints=False
            )
        except ValidationError as error:
            for field_name, messages in error.message_dict.items():
                problems.setdefault(field_name, []).extend(messages)
        errors.append(ValidationError(problems) if problems else None)
    wanted = {(w.namespace_id, w.name) for w, error in zip(workloads, errors) if error is None}
    taken: set[tuple[int, str]] = set()
    if wanted:
        names_by_namespace: dict[int, set[str]] = {}
        for namespace_id, name in wanted:
            names_by_namespace.setdefault(namespace_id, set()).add(name)
        match = Q()
        for namespace_id, names in names_by_namespace.items():
            match |= Q(namespace_id=namespace_id, name__any_of=sorted(names))
        taken = set(Workload.objects.filter(match).values_list("namespace_id", "name"))
    for index, workload in enumerate(workloads):
        if errors[index] is not None:
            continue
        key = (workload.namespace_id, workload.name)
        if key in taken:
            errors[index] = ValidationError(
                {NON_FIELD_ERRORS: [workload.unique_error_message(Workload, ("namespace", "name"))]}
            )
        taken.add(key)
    return errors


def submit_workload(
    *,
    local_queue: LocalQueue,
    name: str,
    pod_sets: list[dict[str, Any]],
    priority: int = 0,
    priority_class: str = "",
    duration_seconds: int | None = None,
    max_runtime_seconds: int | None = None,
    queued_at: datetime | None = None,
    request_pass: bool = True,
) -> Workload:
    """Create a pending workload in ``local_queue``; model validation names any bad field.

    ``request_pass=False`` leaves asking for the admission pass to the caller (a cluster sync
    importing many jobs asks once per ClusterQueue, not once per job). ``priority`` is taken as
    given: who may set it, and which class it comes from, is decided before (``resolve_priority``)."""
    fields = {
        "local_queue": local_queue,
        "name": name,
        "pod_sets": pod_sets,
        "priority": priority,
        "priority_class": priority_class,
        "duration_seconds": duration_seconds,
        "max_runtime_seconds": max_runtime_seconds,
        "queued_at": queued_at,
    }
    (outcome,) = submit_workloads([fields], request_pass=request_pass)
    if isinstance(outcome, ValidationError):
        raise outcome
    return outcome


def submit_workloads(
    entries: Sequence[Mapping[str, Any]], *, request_pass: bool = True
) -> list[Workload | ValidationError]:
    """Many ``submit_workload`` calls as a few statements: the workloads that pass validation are
    inserted with one INSERT, their resource rows with another; one admission pass is asked for
    per ClusterQueue that got work. Each entry holds ``submit_workload``'s keyword arguments;
    the result holds, in order, each new workload or the ValidationError that refused it.

    A unique-name race with a concurrent submission (checked, then taken before the INSERT)
    raises IntegrityError for the whole batch, inside the caller's transaction.
    """
    now = timezone.now()
    workloads = [
        new_workload(
            entry["local_queue"],
            entry["name"],
            entry["pod_sets"],
            priority=entry.get("priority", 0),
            priority_class=entry.get("priority_class", ""),
            duration_seconds=entry.get("duration_seconds"),
            max_runtime_seconds=entry.get("max_runtime_seconds"),
            created_at=now,
            queued_at=entry.get("queued_at") or now,
        )
        for entry in entries
    ]
    errors = validate_new_workloads(workloads)
    accepted = [workload for workload, error in zip(workloads, errors) if error is None]
    if accepted:
        with transaction.atomic():
            insert_rows(Workload, accepted, key=("namespace_id", "name"))
            usage_counters.move((workload.local_queue_id, 0, 1) for workload in accepted)  # each one pending
            insert_rows(
                WorkloadResource,
                [
                    WorkloadResource(workload=workload, resource=resource, amount=amount, flavor_id=None)
                    for workload in accepted
                    for resource, amount in total_requests(workload.pod_sets).items()
                ],
                key=("workload_id", "resource"),
            )
            if request_pass:
                for cluster_queue_id in sorted({workload.local_queue.cluster_queue_id for workload in accepted}):
                    request_admission_pass(cluster_queue_id)
    return [workload if error is None else error for workload, error in zip(workloads, errors)]


def resolve_priority(
    local_queue: LocalQueue, *, priority_class: str | None, priority: int | None, is_admin: bool
) -> tuple[int, str]:
    """``(priority, class name)`` of a submission: priority is policy, not the submitter's choice.

    A non-admin (tenant, executor) names a class its namespace allows, or gets the namespace's
    default class (none: priority 0); a raw ``priority`` from them is refused. Admins may set a
    raw priority, or name any class. Errors are ``ValidationError`` naming ``priority`` or
    ``priority_class``.
    """
    from django.core.exceptions import ValidationError

    from queues.models import WorkloadPriorityClass

    namespace = local_queue.namespace
    if priority is not None and not is_admin:
        raise ValidationError({"priority": "only admins set a raw priority: name a priority_class instead"})
    if priority is not None and priority_class:
        raise ValidationError({"priority": "give a priority_class or a priority, not both"})
    if priority is not None:
        return priority, ""
    if not priority_class:
        default = namespace.default_priority_class
        return (default.value, default.name) if default is not None else (0, "")
    found = WorkloadPriorityClass.objects.filter(name=priority_class).first()
    allowed = namespace.priority_class_names()
    if found is None or (not is_admin and found.name not in allowed):
        choices = ", ".join(allowed[:20]) or "none: leave it out"
        raise ValidationError(
            {"priority_class": f"not a priority class namespace {namespace.name} may use (allowed: {choices})"}
        )
    return found.value, found.name
