"""Assertions shared by the API tests."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group, User

from budgets.models import Budget
from core.models import PolicyChange, TenantMembership
from playground.models import Application, Outcome, Run, Scenario
from queues.models import (
    AdmissionRecord,
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    IdempotencyKey,
    LocalQueue,
    Namespace,
    NamespaceQuota,
    PendingOrder,
    ResourceFlavor,
    UsageSample,
    Workload,
    WorkloadResource,
)

STORED_MODELS = (
    ResourceFlavor,
    Cohort,
    CohortQuota,
    ClusterQueue,
    ClusterQueueQuota,
    Namespace,
    NamespaceQuota,
    LocalQueue,
    Workload,
    WorkloadResource,
    AdmissionRecord,
    PendingOrder,
    Budget,
    PolicyChange,
    IdempotencyKey,
    TenantMembership,
    User,
    Group,
    UsageSample,
    Scenario,
    Run,
    Outcome,
    Application,
)


def database_snapshot() -> dict[str, list[dict[str, Any]]]:
    """Every stored row of the domain, to prove a refused request changed nothing."""
    return {model.__name__: list(model.objects.order_by("pk").values()) for model in STORED_MODELS}


def names(response: Any, key: str = "name") -> set[str]:
    return {row[key] for row in response.json()["results"]}


def place_in_line(workload: Workload, position: int) -> None:
    """Store ``workload`` at ``position`` of its ClusterQueue's order, as an admission pass would.

    The places ahead hold ids no workload has (the pass would list other pending workloads there).
    """
    from django.utils import timezone

    ahead = [-(index + 1) for index in range(position - 1)]
    PendingOrder.objects.update_or_create(
        cluster_queue_id=workload.local_queue.cluster_queue_id,
        defaults={"workload_ids": [*ahead, workload.pk], "planned_at": timezone.now()},
    )
