"""Assertions shared by the API tests."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group, User

from budgets.models import Budget
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
    PolicyChange,
    ResourceFlavor,
    SimulationRun,
    TenantMembership,
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
    Budget,
    PolicyChange,
    IdempotencyKey,
    TenantMembership,
    User,
    Group,
    UsageSample,
    SimulationRun,
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
