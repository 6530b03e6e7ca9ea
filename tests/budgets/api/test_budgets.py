"""Budgets over the API: who sees which, validation through the model, audited writes."""

from __future__ import annotations

from decimal import Decimal

import pytest

from budgets.models import Budget
from queues.models import ClusterQueue, LocalQueue, Namespace, PolicyChange
from tests.queues.api.helpers import database_snapshot, names

pytestmark = pytest.mark.django_db

URL = "/api/v1/budgets/"


def test_given_a_cluster_queue_budget_then_tenants_feeding_that_queue_see_it_and_others_do_not(world, clients):
    Budget.objects.create(name="shared-hours", cluster_queue=world.cluster_queue, allocated_hours=Decimal(500))
    lonely_ns = Namespace.objects.create(name="team-c")
    lonely_cq = ClusterQueue.objects.create(name="lonely")
    LocalQueue.objects.create(namespace=lonely_ns, name="main", cluster_queue=lonely_cq)
    Budget.objects.create(name="lonely-hours", cluster_queue=lonely_cq, allocated_hours=Decimal(5))

    assert names(clients["tenant_b"].get(URL)) == {"b-hours", "shared-hours"}
    assert names(clients["viewer_a"].get(URL)) == {"a-hours", "shared-hours"}


def test_given_a_new_budget_then_created_with_its_target_and_audited(world, clients):
    body = {
        "name": "gpu-hours",
        "local_queue": "team-a/main",
        "kind": "ResourceHours",
        "resource": "nvidia.com/gpu",
        "flavor": "default",
        "allocated_hours": "250.5",
        "renewal": "monthly",
        "alert_thresholds": [50, 90.5],
    }

    response = clients["admin"].post(URL, body, format="json")

    assert response.status_code == 201
    data = response.json()
    assert (data["target"], data["allocated_hours"], data["alert_thresholds"]) == (
        "LocalQueue team-a/main",
        250.5,
        [50, 90.5],
    )
    assert PolicyChange.objects.filter(object_type="budget", action="create", surface="api").exists()


@pytest.mark.parametrize(
    ("body", "field", "fragment"),
    [
        ({"local_queue": "team-a/main", "namespace": "team-a"}, "local_queue", "exactly one target"),
        ({"local_queue": "team-a/main", "kind": "ResourceHours"}, "resource", "required for a ResourceHours"),
        ({"local_queue": "team-a/main", "allocated_hours": -1}, "allocated_hours", "negative"),
        ({"local_queue": "team-a/main", "alert_thresholds": [0]}, "alert_thresholds", "between 0 and 1000"),
        ({"local_queue": "team-a/main", "renewal": "days"}, "renewal_days", "required"),
        ({"cluster_queue": "nowhere"}, "cluster_queue", "does not exist"),
    ],
    ids=[
        "two-targets",
        "resource-hours-without-resource",
        "negative-hours",
        "zero-threshold",
        "days-without-n",
        "unknown-queue",
    ],
)
def test_given_a_bad_budget_then_400_names_the_field_and_nothing_changes(world, clients, body, field, fragment):
    before = database_snapshot()
    payload = {"name": "bad-budget", "allocated_hours": 10, **body}

    response = clients["admin"].post(URL, payload, format="json")

    assert response.status_code == 400
    assert any(fragment in message for message in response.json()[field]), response.json()
    assert database_snapshot() == before


def test_given_an_editor_when_raising_its_own_budget_then_403(world, clients):
    response = clients["editor_a"].patch(f"{URL}{world.budget_a.pk}/", {"allocated_hours": 10_000}, format="json")

    assert response.status_code == 403
    assert Budget.objects.get(pk=world.budget_a.pk).allocated_hours == Decimal(100)


def test_given_tenant_b_when_changing_tenant_a_budget_then_404(world, clients):
    response = clients["tenant_b"].patch(f"{URL}{world.budget_a.pk}/", {"allocated_hours": 1}, format="json")

    assert response.status_code == 404
