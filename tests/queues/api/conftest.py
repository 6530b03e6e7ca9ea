"""A small two-tenant cluster and one authenticated API client per role.

Tenant A (``team-a``) and tenant B (``team-b``) share one ClusterQueue. Users:
``admin`` (staff), ``editor_a`` and ``viewer_a`` (members of team-a and of the empty
``team-a-spare``), ``tenant_b`` (editor of team-b) and ``executor`` (in the executors group).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.db import transaction
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from budgets.models import Budget, BudgetEvent
from core.access import EXECUTORS_GROUP
from core.api_tokens import issue_token
from core.audit import policy_state, record_change
from core.models import PolicyChange, Surface, TenantMembership
from fairshare.quantities import parse_millis
from playground.models import Run as PlaygroundRun
from playground.models import Scenario as PlaygroundScenario
from queues.models import (
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    LocalQueue,
    Namespace,
    NamespaceQuota,
    ResourceFlavor,
    UsageSample,
    Workload,
)
from queues.services import submit_workload, transitions
from tests.factories import UserFactory, simulation_run

ROLES = ("anonymous", "admin", "editor_a", "viewer_a", "tenant_b", "executor")
GPU = "nvidia.com/gpu"


@dataclass
class World:
    flavor: ResourceFlavor
    cohort: Cohort
    cluster_queue: ClusterQueue
    ns_a: Namespace
    ns_a_spare: Namespace
    ns_b: Namespace
    lq_a: LocalQueue
    lq_a_spare: LocalQueue
    lq_b: LocalQueue
    pending_a: Workload
    admitted_a: Workload
    pending_b: Workload
    budget_a: Budget
    budget_b: Budget
    event_a: BudgetEvent
    change_a: PolicyChange
    spare_flavor: ResourceFlavor
    spare_cohort: Cohort
    spare_cluster_queue: ClusterQueue
    sample_a: UsageSample
    sample_b: UsageSample
    sample_cq: UsageSample
    users: dict[str, Any] = field(default_factory=dict)
    run_a: PlaygroundRun | None = None  # a /api/v1/simulations/ run
    playground_scenario_a: PlaygroundScenario | None = None
    playground_run_a: PlaygroundRun | None = None


def pod_sets(**requests: str) -> list[dict[str, Any]]:
    return [{"count": 1, "requests": requests or {"cpu": "1"}}]


def admit(workload: Workload, *, seconds_ago: int = 600, at: datetime | None = None) -> Workload:
    """Admit a workload the way the admission pass does (opening its admission interval)."""
    flavor = ResourceFlavor.objects.get(name="default")
    admitted = transitions.admit(
        workload_id=workload.pk,
        cluster_queue_id=workload.local_queue.cluster_queue_id,
        assignment=dict.fromkeys(workload.requests, flavor.name),
        flavor_ids={flavor.name: flavor.pk},
        now=at or timezone.now() - timedelta(seconds=seconds_ago),
        started=False,
    )
    assert admitted, f"{workload} was not pending"
    workload.refresh_from_db()
    return workload


def build_world() -> World:
    flavor = ResourceFlavor.objects.create(name="default")
    cohort = Cohort.objects.create(name="org")
    cq = ClusterQueue.objects.create(name="shared", cohort=cohort)
    for resource, nominal in (("cpu", "32"), ("memory", "128Gi"), (GPU, "4")):
        ClusterQueueQuota.objects.create(
            cluster_queue=cq, flavor=flavor, resource=resource, nominal=parse_millis(nominal)
        )
    ns_a = Namespace.objects.create(name="team-a", weight=Decimal(2))
    NamespaceQuota.objects.create(namespace=ns_a, resource="cpu", hard=parse_millis("16"))
    ns_a_spare = Namespace.objects.create(name="team-a-spare")
    ns_b = Namespace.objects.create(name="team-b")
    lq_a = LocalQueue.objects.create(namespace=ns_a, name="main", cluster_queue=cq)
    lq_a_spare = LocalQueue.objects.create(namespace=ns_a, name="spare", cluster_queue=cq)
    lq_b = LocalQueue.objects.create(namespace=ns_b, name="main", cluster_queue=cq)
    pending_a = submit_workload(local_queue=lq_a, name="a-pending", pod_sets=pod_sets(cpu="2", memory="4Gi"))
    admitted_a = admit(submit_workload(local_queue=lq_a, name="a-admitted", pod_sets=pod_sets(cpu="1")))
    pending_b = submit_workload(local_queue=lq_b, name="b-pending", pod_sets=pod_sets(cpu="1"))
    budget_a = Budget.objects.create(name="a-hours", local_queue=lq_a, allocated_hours=Decimal(100))
    budget_b = Budget.objects.create(name="b-hours", local_queue=lq_b, allocated_hours=Decimal(100))
    event_a = BudgetEvent.objects.create(
        budget=budget_a,
        kind=BudgetEvent.Kind.THRESHOLD,
        at=timezone.now(),
        period_start=budget_a.anchor,
        threshold=Decimal(80),
        used_hours=Decimal(81),
        allocated_hours=Decimal(100),
        message="a-hours at 81%",
    )
    change_a = record_change(
        instance=lq_a,
        action=PolicyChange.Action.UPDATE,
        before={"weight": "1"},
        after=policy_state(lq_a),
        surface=Surface.ADMIN,
    )
    world = World(
        flavor=flavor,
        cohort=cohort,
        cluster_queue=cq,
        ns_a=ns_a,
        ns_a_spare=ns_a_spare,
        ns_b=ns_b,
        lq_a=lq_a,
        lq_a_spare=lq_a_spare,
        lq_b=lq_b,
        pending_a=pending_a,
        admitted_a=admitted_a,
        pending_b=pending_b,
        budget_a=budget_a,
        budget_b=budget_b,
        event_a=event_a,
        change_a=change_a,
        spare_flavor=ResourceFlavor.objects.create(name="spare"),
        spare_cohort=Cohort.objects.create(name="spare"),
        spare_cluster_queue=ClusterQueue.objects.create(name="spare"),
        sample_a=sample(UsageSample.Kind.LOCAL_QUEUE, lq_a.pk),
        sample_b=sample(UsageSample.Kind.LOCAL_QUEUE, lq_b.pk),
        sample_cq=sample(UsageSample.Kind.CLUSTER_QUEUE, cq.pk, capacity={"cpu": parse_millis("32")}),
    )
    world.users = make_users(world)
    world.run_a = simulation_run(world.users["editor_a"], name="what-if", document=tiny_scenario())
    world.playground_scenario_a = PlaygroundScenario.objects.create(
        name="what-if",
        source=PlaygroundScenario.Source.UPLOAD,
        owner=world.users["editor_a"],
        document=tiny_scenario(),
        workload_count=2,
    )
    world.playground_run_a = PlaygroundRun.objects.create(
        scenario=world.playground_scenario_a, owner=world.users["editor_a"], edits=["localQueues.team-a/main.weight=2"]
    )
    return world


def sample(kind: str, object_id: int, **fields: Any) -> UsageSample:
    """One usage sample, as the control loop's sampler writes it (millis inside)."""
    return UsageSample.objects.create(
        sampled_at=timezone.now(),
        kind=kind,
        object_id=object_id,
        allocated={"cpu": parse_millis("3")},
        consumed={"cpu": 2500.0},
        admitted_count=1,
        **fields,
    )


def tiny_scenario(**overrides: Any) -> dict[str, Any]:
    """Two teams on one ClusterQueue for an hour: small enough to simulate within a request."""
    document: dict[str, Any] = {
        "name": "two-teams",
        "clock": {"horizon": "1h", "tick": "1m"},
        "resourceFlavors": [{"name": "default"}],
        "clusterQueues": [
            {
                "name": "cq-a",
                "admissionScope": {"admissionMode": "UsageBasedAdmissionFairSharing"},
                "quotas": [{"flavor": "default", "resources": {"cpu": {"nominal": 4}}}],
            }
        ],
        "localQueues": [
            {"name": "team-a/main", "clusterQueue": "cq-a"},
            {"name": "team-b/main", "clusterQueue": "cq-a"},
        ],
        "workloads": [
            {
                "name": "a-1",
                "localQueue": "team-a/main",
                "duration": "20m",
                "podSets": [{"count": 4, "requests": {"cpu": "1"}}],
            },
            {
                "name": "b-1",
                "localQueue": "team-b/main",
                "duration": "20m",
                "podSets": [{"count": 2, "requests": {"cpu": "1"}}],
            },
        ],
    }
    document.update(overrides)
    return document


def make_users(world: World) -> dict[str, Any]:
    users = {
        "admin": UserFactory(username="admin", is_staff=True),
        "editor_a": UserFactory(username="editor-a"),
        "viewer_a": UserFactory(username="viewer-a"),
        "tenant_b": UserFactory(username="tenant-b"),
        "executor": UserFactory(username="executor"),
    }
    for namespace in (world.ns_a, world.ns_a_spare):
        TenantMembership.objects.create(user=users["editor_a"], namespace=namespace, role=TenantMembership.Role.EDITOR)
        TenantMembership.objects.create(user=users["viewer_a"], namespace=namespace, role=TenantMembership.Role.VIEWER)
    TenantMembership.objects.create(user=users["tenant_b"], namespace=world.ns_b, role=TenantMembership.Role.EDITOR)
    group, _ = Group.objects.get_or_create(name=EXECUTORS_GROUP)
    users["executor"].groups.add(group)
    return users


def client_for(user: Any | None) -> APIClient:
    """An API client sending the user's token (none for anonymous)."""
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(user)}")
    return client


FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="module", autouse=True)
def fast_password_hashing():
    """Test users need no slow key stretching (PBKDF2 would cost a second per world)."""
    with override_settings(PASSWORD_HASHERS=FAST_HASHERS):
        yield


@pytest.fixture(scope="module")
def module_world(django_db_setup, django_db_blocker, fast_password_hashing) -> World:
    """The world, built once per test module inside a transaction rolled back at its end.

    Each test still runs in its own savepoint inside it (pytest-django's ``db``), so whatever a
    test changes is undone before the next one.
    """
    with django_db_blocker.unblock(), transaction.atomic():
        world = build_world()
        yield world
        transaction.set_rollback(True)


@pytest.fixture
def world(module_world, db) -> World:
    return module_world


@pytest.fixture
def clients(world) -> dict[str, APIClient]:
    return {role: client_for(world.users.get(role)) for role in ROLES}
