"""Who may do what, over every endpoint and method, for every role (a declarative table).

Each endpoint's target object belongs to tenant A (or is cluster-wide policy), so the table also
shows that tenant B can neither see (404) nor change tenant A's namespaces, queues, workloads and
budgets, and that a refused request leaves the database as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

from tests.queues.api.conftest import ROLES, World, client_for, tiny_scenario
from tests.queues.api.helpers import database_snapshot, names

pytestmark = pytest.mark.django_db


def row(admin: int, editor_a: int, viewer_a: int, tenant_b: int, executor: int) -> dict[str, int]:
    """Expected status per role; anonymous callers always get 401."""
    return {
        "anonymous": 401,
        "admin": admin,
        "editor_a": editor_a,
        "viewer_a": viewer_a,
        "tenant_b": tenant_b,
        "executor": executor,
    }


# Cluster-wide policy: every tenant reads, admins write, executors have no business here.
CLUSTER_WIDE = {
    "list": row(200, 200, 200, 200, 403),
    "retrieve": row(200, 200, 200, 200, 403),
    "create": row(201, 403, 403, 403, 403),
    "update": row(200, 403, 403, 403, 403),
    "partial_update": row(200, 403, 403, 403, 403),
    "destroy": row(204, 403, 403, 403, 403),
}
# Namespace-scoped, admin-written: tenant A reads its own, tenant B gets 404 for A's object.
TENANT_OWNED = {
    "list": row(200, 200, 200, 200, 403),
    "retrieve": row(200, 200, 200, 404, 403),
    "create": row(201, 403, 403, 403, 403),
    "update": row(200, 403, 403, 404, 403),
    "partial_update": row(200, 403, 403, 404, 403),
    "destroy": row(204, 403, 403, 404, 403),
}
# LocalQueues: editors of the namespace change their allowed fields (the payload changes only
# the description).
LOCAL_QUEUES = {
    **TENANT_OWNED,
    "update": row(200, 200, 403, 404, 403),
    "partial_update": row(200, 200, 403, 404, 403),
}
# Workloads: editors submit and cancel, executors report, everyone concerned reads. Tenant B
# naming tenant A's LocalQueue in a submission gets a 400 on local_queue (it does not exist).
WORKLOADS = {
    "list": row(200, 200, 200, 200, 200),
    "retrieve": row(200, 200, 200, 404, 200),
    "create": row(201, 201, 403, 400, 403),
    "update": row(405, 405, 405, 405, 405),
    "partial_update": row(405, 405, 405, 405, 405),
    "destroy": row(405, 405, 405, 405, 405),
    "start": row(200, 403, 403, 404, 200),
    "finish": row(200, 403, 403, 404, 200),
    "fail": row(200, 403, 403, 404, 200),
    "cancel": row(200, 200, 403, 404, 403),
}
# Usage series: tenants read their LocalQueues' (and cluster-wide) series; nobody writes.
USAGE_SAMPLES = {
    "list": row(200, 200, 200, 200, 403),
    "retrieve": row(200, 200, 200, 404, 403),
    "create": row(405, 405, 405, 405, 405),
    "update": row(405, 405, 405, 405, 405),
    "partial_update": row(405, 405, 405, 405, 405),
    "destroy": row(405, 405, 405, 405, 405),
}
# The terminal's read-only answers (bin/fairportal): shares per LocalQueue for admins and
# tenants; priority (workloads with their factors) for everyone who reads workloads.
SHARES = {
    "list": row(200, 200, 200, 200, 403),
    "create": row(405, 405, 405, 405, 405),
}
PRIORITY = {
    "list": row(200, 200, 200, 200, 200),
    "retrieve": row(200, 200, 200, 404, 200),
    "create": row(405, 405, 405, 405, 405),
    "update": row(405, 405, 405, 405, 405),
    "partial_update": row(405, 405, 405, 405, 405),
    "destroy": row(405, 405, 405, 405, 405),
}
# Simulations: admins and tenants run scenarios (every run queued for the what-if lane, 202); a
# stored run is its owner's (editor_a's here): anyone else but an admin gets a 404.
SIMULATIONS = {
    "list": row(200, 200, 200, 200, 403),
    "retrieve": row(200, 200, 404, 404, 403),
    "create": row(202, 202, 202, 202, 403),
    "update": row(405, 405, 405, 405, 405),
    "partial_update": row(405, 405, 405, 405, 405),
    "destroy": row(405, 405, 405, 405, 405),
}
# The playground: admins and tenants create scenarios and runs and read their own (editor_a's
# here: anyone else but an admin gets a 404). A run names a scenario its creator may see (400
# otherwise); only admins apply (the world's run is still queued: 409 for them, 403 for its owner).
PLAYGROUND_PRESETS = {
    "list": row(200, 200, 200, 200, 403),
    "retrieve": row(200, 200, 200, 200, 403),
    "create": row(405, 405, 405, 405, 403),
    "update": row(405, 405, 405, 405, 403),
    "partial_update": row(405, 405, 405, 405, 403),
    "destroy": row(405, 405, 405, 405, 403),
}
PLAYGROUND_SCENARIOS = {
    "list": row(200, 200, 200, 200, 403),
    "retrieve": row(200, 200, 404, 404, 403),
    "create": row(201, 201, 201, 201, 403),
    "update": row(405, 405, 405, 405, 403),
    "partial_update": row(405, 405, 405, 405, 403),
    "destroy": row(405, 405, 405, 405, 403),
}
PLAYGROUND_RUNS = {
    "list": row(200, 200, 200, 200, 403),
    "retrieve": row(200, 200, 404, 404, 403),
    "create": row(202, 202, 400, 400, 403),
    "update": row(405, 405, 405, 405, 403),
    "partial_update": row(405, 405, 405, 405, 403),
    "destroy": row(405, 405, 405, 405, 403),
    "apply": row(409, 403, 404, 404, 403),
}
# The audit trail and budget events are read-only for everyone.
POLICY_CHANGES = {
    "list": row(200, 200, 200, 200, 403),
    "retrieve": row(200, 200, 200, 404, 403),
    "create": row(405, 405, 405, 405, 405),
    "update": row(405, 405, 405, 405, 405),
    "partial_update": row(405, 405, 405, 405, 405),
    "destroy": row(405, 405, 405, 405, 405),
}
# Signed-webhook endpoints and their deliveries: admins only (everyone else 403); deliveries are
# read-only (a write method is a 405 for anyone), with a redeliver action.
WEBHOOK_ENDPOINTS = {
    "list": row(200, 403, 403, 403, 403),
    "retrieve": row(200, 403, 403, 403, 403),
    "create": row(201, 403, 403, 403, 403),
    "update": row(200, 403, 403, 403, 403),
    "partial_update": row(200, 403, 403, 403, 403),
    "destroy": row(204, 403, 403, 403, 403),
    "rotate": row(200, 403, 403, 403, 403),
    "end-rotation": row(200, 403, 403, 403, 403),
}
WEBHOOK_DELIVERIES = {
    "list": row(200, 403, 403, 403, 403),
    "retrieve": row(200, 403, 403, 403, 403),
    "create": row(405, 405, 405, 405, 405),
    "update": row(405, 405, 405, 405, 405),
    "partial_update": row(405, 405, 405, 405, 405),
    "destroy": row(405, 405, 405, 405, 405),
    "redeliver": row(202, 403, 403, 403, 403),
}


@pytest.fixture(autouse=True)
def webhooks_to_loopback(settings):
    """Webhook receivers must be public addresses unless allowed: the table's endpoint is on
    127.0.0.1 (nothing is sent: deliveries go out after a commit, and each test rolls back)."""
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]


def webhook_endpoint(world: World) -> Any:
    from core.models import WebhookEndpoint
    from core.webhooks import new_secret

    endpoint, _ = WebhookEndpoint.objects.get_or_create(
        name="ops-hook",
        defaults={"url": "http://127.0.0.1:9/hook", "events": ["policy.changed"], "secret": new_secret()},
    )
    return endpoint


def webhook_delivery(world: World) -> Any:
    from core.models import WebhookDelivery
    from core.webhooks import queue

    endpoint = webhook_endpoint(world)
    existing = WebhookDelivery.objects.filter(endpoint=endpoint).first()
    if existing is not None:
        return existing
    return queue([endpoint], event_type="policy.changed", source="test", source_id=1, body={}, enqueue=False)[0]


@dataclass(frozen=True)
class Endpoint:
    prefix: str
    matrix: dict[str, dict[str, int]]
    target: Callable[[World], Any]
    create_body: dict[str, Any] | Callable[[World], dict[str, Any]]


def spare_cluster(world: World) -> Any:
    from queues.models import Cluster

    return Cluster.objects.get_or_create(name="spare-cluster", defaults={"backend": "simulated"})[0]


ENDPOINTS = [
    Endpoint("clusters", CLUSTER_WIDE, spare_cluster, {"name": "new-cluster", "backend": "simulated"}),
    Endpoint("resource-flavors", CLUSTER_WIDE, lambda w: w.spare_flavor, {"name": "new-flavor"}),
    Endpoint(
        "cohorts",
        CLUSTER_WIDE,
        lambda w: w.spare_cohort,
        {"name": "new-cohort", "parent": "org", "quotas": [{"flavor": "default", "resource": "cpu", "nominal": "8"}]},
    ),
    Endpoint(
        "cluster-queues",
        CLUSTER_WIDE,
        lambda w: w.spare_cluster_queue,
        {"name": "new-cq", "cohort": "org", "quotas": [{"flavor": "default", "resource": "cpu", "nominal": 8}]},
    ),
    Endpoint("namespaces", TENANT_OWNED, lambda w: w.ns_a_spare, {"name": "new-ns", "hard_quota": {"cpu": "8"}}),
    Endpoint(
        "local-queues",
        LOCAL_QUEUES,
        lambda w: w.lq_a_spare,
        {"namespace": "team-a", "name": "new-lq", "cluster_queue": "shared"},
    ),
    Endpoint(
        "budgets",
        TENANT_OWNED,
        lambda w: w.budget_a,
        {"name": "new-budget", "local_queue": "team-a/main", "allocated_hours": 10},
    ),
    Endpoint(
        "workloads",
        WORKLOADS,
        lambda w: w.admitted_a,
        {"name": "new-wl", "local_queue": "team-a/main", "pod_sets": [{"count": 1, "requests": {"cpu": "1"}}]},
    ),
    Endpoint("policy-changes", POLICY_CHANGES, lambda w: w.change_a, {"note": "forged"}),
    Endpoint("budget-events", POLICY_CHANGES, lambda w: w.event_a, {"message": "forged"}),
    Endpoint("usage-samples", USAGE_SAMPLES, lambda w: w.sample_a, {"kind": "localQueue"}),
    Endpoint("simulations", SIMULATIONS, lambda w: w.run_a, {"scenario": tiny_scenario()}),
    Endpoint("shares", SHARES, lambda w: w.lq_a, {"weight": 10}),
    Endpoint("priority", PRIORITY, lambda w: w.admitted_a, {"priority": 100}),
    Endpoint(
        "webhook-endpoints",
        WEBHOOK_ENDPOINTS,
        webhook_endpoint,
        {"name": "new-hook", "url": "http://127.0.0.1:9/new", "events": ["budget.*"]},
    ),
    Endpoint("webhook-deliveries", WEBHOOK_DELIVERIES, webhook_delivery, {"status": "delivered"}),
    Endpoint("playground/presets", PLAYGROUND_PRESETS, lambda w: SimpleNamespace(pk="volcano-16cpu"), {}),
    Endpoint(
        "playground/scenarios",
        PLAYGROUND_SCENARIOS,
        lambda w: w.playground_scenario_a,
        {"source": "document", "document": tiny_scenario()},
    ),
    Endpoint(
        "playground/runs",
        PLAYGROUND_RUNS,
        lambda w: w.playground_run_a,
        lambda w: {"scenario": str(w.playground_scenario_a.pk), "edits": ["localQueues.team-b/main.weight=3"]},
    ),
]

CASES = [
    pytest.param(endpoint, action, role, expected, id=f"{endpoint.prefix}-{action}-{role}")
    for endpoint in ENDPOINTS
    for action, expected_by_role in endpoint.matrix.items()
    for role, expected in expected_by_role.items()
]


def editable_body(world: World, endpoint: Endpoint) -> dict[str, Any]:
    """The target as an admin reads it, with only its description changed (a valid PUT body)."""
    target = endpoint.target(world)
    body = client_for(world.users["admin"]).get(f"/api/v1/{endpoint.prefix}/{target.pk}/").json()
    body["description"] = "changed through the API"
    return body


def call(client: Any, world: World, endpoint: Endpoint, action: str) -> Any:
    collection = f"/api/v1/{endpoint.prefix}/"
    detail = f"{collection}{endpoint.target(world).pk}/"
    if action == "list":
        return client.get(collection)
    if action == "retrieve":
        return client.get(detail)
    if action == "create":
        body = endpoint.create_body(world) if callable(endpoint.create_body) else endpoint.create_body
        return client.post(collection, body, format="json")
    if action == "update":
        return client.put(detail, editable_body(world, endpoint), format="json")
    if action == "partial_update":
        return client.patch(detail, {"description": "changed through the API"}, format="json")
    if action == "destroy":
        return client.delete(detail)
    return client.post(f"{detail}{action}/")  # a workload lifecycle report


@pytest.mark.parametrize(("endpoint", "action", "role", "expected"), CASES)
def test_given_role_when_calling_endpoint_then_status_matches_the_matrix(world, endpoint, action, role, expected):
    client = client_for(world.users.get(role))
    before = database_snapshot()

    response = call(client, world, endpoint, action)

    assert response.status_code == expected, response.content
    if response.status_code >= 400:
        assert database_snapshot() == before, "a refused request changed stored data"


def test_matrix_covers_every_routed_endpoint_and_every_role():
    from fairportal.urls import api

    routed = {prefix for prefix, _viewset, _basename in api.registry}
    assert routed == {endpoint.prefix for endpoint in ENDPOINTS}
    assert all(set(row) == set(ROLES) for endpoint in ENDPOINTS for row in endpoint.matrix.values())


# -- what each tenant's lists contain ---------------------------------------------------------

VISIBLE = {
    ("namespaces", "editor_a"): {"team-a", "team-a-spare"},
    ("namespaces", "viewer_a"): {"team-a", "team-a-spare"},
    ("namespaces", "tenant_b"): {"team-b"},
    ("local-queues", "editor_a"): {"team-a/main", "team-a/spare"},
    ("local-queues", "tenant_b"): {"team-b/main"},
    ("workloads", "viewer_a"): {"a-pending", "a-admitted"},
    ("workloads", "tenant_b"): {"b-pending"},
    ("workloads", "executor"): {"a-pending", "a-admitted", "b-pending"},
    ("budgets", "viewer_a"): {"a-hours"},
    ("budgets", "tenant_b"): {"b-hours"},
    ("simulations", "editor_a"): {"what-if"},
    ("simulations", "tenant_b"): set(),
    ("shares", "viewer_a"): {"team-a/main", "team-a/spare"},
    ("shares", "tenant_b"): {"team-b/main"},
    ("priority", "viewer_a"): {"team-a/a-pending", "team-a/a-admitted"},
    ("priority", "tenant_b"): {"team-b/b-pending"},
}
LIST_KEY = {"local-queues": "key", "simulations": "scenario", "shares": "local_queue", "priority": "workload"}


@pytest.mark.parametrize(("prefix", "role"), list(VISIBLE), ids=lambda value: str(value))
def test_given_tenant_when_listing_then_only_its_own_namespaces_objects_exist(world, prefix, role):
    response = client_for(world.users[role]).get(f"/api/v1/{prefix}/")

    assert response.status_code == 200
    assert names(response, LIST_KEY.get(prefix, "name")) == VISIBLE[(prefix, role)]


def test_given_tenant_b_when_listing_policy_changes_then_tenant_a_rows_are_absent(world, clients):
    rows_b = clients["tenant_b"].get("/api/v1/policy-changes/").json()["results"]
    rows_a = clients["viewer_a"].get("/api/v1/policy-changes/").json()["results"]

    assert world.change_a.pk not in {row["id"] for row in rows_b}
    assert world.change_a.pk in {row["id"] for row in rows_a}


@pytest.mark.parametrize(
    ("role", "visible"),
    [("admin", {"a", "b", "cq"}), ("viewer_a", {"a", "cq"}), ("tenant_b", {"b", "cq"})],
)
def test_given_tenant_when_listing_usage_samples_then_other_tenants_series_are_absent(world, role, visible):
    ids = {world.sample_a.pk: "a", world.sample_b.pk: "b", world.sample_cq.pk: "cq"}

    rows = client_for(world.users[role]).get("/api/v1/usage-samples/").json()["results"]

    assert {ids[row["id"]] for row in rows} == visible


def test_given_tenant_b_when_filtering_for_tenant_a_by_name_then_nothing_leaks(world, clients):
    response = clients["tenant_b"].get("/api/v1/workloads/", {"namespace": "team-a"})

    assert response.status_code == 200
    assert response.json()["count"] == 0


def test_given_tenant_b_when_submitting_to_its_own_queue_then_created(world, clients):
    body = {"name": "b-new", "local_queue": "team-b/main", "pod_sets": [{"requests": {"cpu": "1"}}]}

    response = clients["tenant_b"].post("/api/v1/workloads/", body, format="json")

    assert response.status_code == 201
    assert response.json()["namespace"] == "team-b"


def test_given_viewer_when_submitting_then_403_names_the_missing_role(world, clients):
    body = {"name": "v-new", "local_queue": "team-a/main", "pod_sets": [{"requests": {"cpu": "1"}}]}

    response = clients["viewer_a"].post("/api/v1/workloads/", body, format="json")

    assert response.status_code == 403
    assert "editor role in namespace team-a" in response.json()["detail"]


def test_given_user_without_any_role_when_listing_then_403(world):
    from tests.factories import UserFactory

    response = client_for(UserFactory(username="nobody")).get("/api/v1/namespaces/")

    assert response.status_code == 403


def test_given_session_login_when_listing_then_authenticated_like_a_token(world):
    from django.http import HttpRequest
    from rest_framework.test import APIClient

    client = APIClient()
    # Sign-in goes through django-axes, which needs the request the password came with.
    assert client.login(request=HttpRequest(), username="viewer-a", password="pw")

    response = client.get("/api/v1/local-queues/")

    assert response.status_code == 200
    assert names(response, "key") == {"team-a/main", "team-a/spare"}
