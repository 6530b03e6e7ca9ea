"""Workload submission and its derived per-resource rows."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from queues.models import LocalQueue, ResourceFlavor, Workload, WorkloadResource
from queues.models.workload import total_requests
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
    now = timezone.now()
    workload = new_workload(
        local_queue, name, pod_sets, priority=priority, priority_class=priority_class, duration_seconds=duration_seconds,
        max_runtime_seconds=max_runtime_seconds, created_at=now, queued_at=queued_at or now,
    )
    workload.full_clean()
    with transaction.atomic():
        workload.save()
        sync_workload_resources(workload)
        if request_pass:
            request_admission_pass(local_queue.cluster_queue_id)
    return workload


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
