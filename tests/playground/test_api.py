"""The playground over the REST API: create a scenario, run, fetch the comparison, apply; who may."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from core.api_tokens import issue_token
from core.models import PolicyChange, TenantMembership
from playground.models import Run, Scenario
from playground.services import runs
from queues.models import ClusterQueue, Namespace
from tests.factories import UserFactory
from tests.playground.clusters import volcano_cluster

pytestmark = pytest.mark.django_db

BASE = "/api/v1/playground"


def client_for(user) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(user)}")
    return client


@pytest.fixture
def other_tenant(db):
    user = UserFactory(username="pg-other")
    namespace, _ = Namespace.objects.get_or_create(name="team-b")
    TenantMembership.objects.create(user=user, namespace=namespace)
    return user


def create_preset(client: APIClient, slug: str = "volcano-16cpu") -> dict:
    response = client.post(f"{BASE}/scenarios/", {"source": "preset", "preset": slug}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def run_and_execute(client: APIClient, scenario_id: str, edits: list[str]) -> dict:
    response = client.post(f"{BASE}/runs/", {"scenario": scenario_id, "edits": edits, "title": "api"}, format="json")
    assert response.status_code == 202, response.json()
    runs.execute_run(response.json()["id"])  # the worker's side
    return response.json()


def test_presets_are_listed_with_their_suggested_edits(admin):
    body = client_for(admin).get(f"{BASE}/presets/").json()
    assert [p["slug"] for p in body][:2] == ["kep4136-entry-penalty", "volcano-16cpu"]
    assert body[1]["suggested_edits"][0] == "clusterQueues.q2.weight=3"


def test_a_full_what_if_over_the_api(admin, no_broker):
    volcano_cluster()
    client = client_for(admin)
    scenario = create_preset(client)
    assert scenario["document"]["name"] == "volcano-16cpu" and scenario["workload_count"] == 27

    run = run_and_execute(client, scenario["id"], ["clusterQueues.q2.weight=3"])
    assert run["status"] == "queued" and run["deltas"][0]["label"] == "ClusterQueue q2 weight"
    polled = client.get(f"{BASE}/runs/{run['id']}/").json()
    assert (polled["status"], polled["progress"], polled["page"]) == (
        "succeeded",
        1.0,
        f"/playground/runs/{run['id']}/",
    )

    comparison = client.get(f"{BASE}/runs/{run['id']}/comparison/").json()
    assert {"kpis", "tenants", "localQueues", "budgets", "moved", "series"} <= set(comparison)
    results = client.get(f"{BASE}/runs/{run['id']}/results/").json()
    assert results["baseline"]["scenario"] == results["edited"]["scenario"] == "volcano-16cpu"

    applied = client.post(f"{BASE}/runs/{run['id']}/apply/")
    assert applied.status_code == 201
    assert ClusterQueue.objects.get(name="q2").weight == 3
    assert applied.json()["policy_changes"] == list(PolicyChange.objects.values_list("id", flat=True))
    assert client.get(f"{BASE}/runs/{run['id']}/").json()["applications"][0]["actor"] == admin.username


def test_a_document_with_a_bad_field_is_a_400_naming_its_path(admin):
    document = {
        "name": "x",
        "resourceFlavors": [{"name": "default"}],
        "clusterQueues": [{"name": "cq", "quotas": [{"flavor": "default", "resources": {"cpu": {"nominal": "-1"}}}]}],
    }
    response = client_for(admin).post(f"{BASE}/scenarios/", {"source": "document", "document": document}, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "document": {"clusterQueues[0].quotas[0].resources.cpu.nominal": ["must not be negative, got '-1'"]}
    }
    assert not Scenario.objects.exists()


@pytest.mark.parametrize(
    "payload, errors",
    [
        ({"source": "preset"}, {"preset": ["required when source is preset"]}),
        (
            {"source": "preset", "preset": "nope"},
            {"preset": ["unknown preset: one of the slugs of /api/v1/playground/presets/"]},
        ),
        ({"source": "live", "days": 31}, {"days": ["Ensure this value is less than or equal to 30."]}),
        (
            {"source": "live", "lookahead": "soon"},
            {"lookahead": ["not a duration (use e.g. 90s, 5m, 2h, 7d or 1h30m)"]},
        ),
        ({"source": "document"}, {"document": ["required when source is document"]}),
    ],
)
def test_bad_scenario_requests_are_400s_naming_the_field(admin, payload, errors):
    response = client_for(admin).post(f"{BASE}/scenarios/", payload, format="json")
    assert (response.status_code, response.json()) == (400, errors)


def test_a_bad_edit_is_a_400_keyed_by_its_position(admin):
    scenario = create_preset(client_for(admin))
    response = client_for(admin).post(
        f"{BASE}/runs/",
        {"scenario": scenario["id"], "edits": ["namespaces.ns1.weight=2", "namespaces.ns2.weight=0"]},
        format="json",
    )
    assert response.status_code == 400
    assert response.json() == {"edits": {"1": ["namespaces[1].weight: must be greater than 0, got 0"]}}
    assert not Run.objects.exists()


def test_the_comparison_of_an_unfinished_run_is_a_409_with_its_status(admin, no_broker):
    client = client_for(admin)
    scenario = create_preset(client)
    run = client.post(
        f"{BASE}/runs/", {"scenario": scenario["id"], "edits": ["clusterQueues.q2.weight=3"]}, format="json"
    ).json()
    response = client.get(f"{BASE}/runs/{run['id']}/comparison/")
    assert (response.status_code, response.json()["status"]) == (409, "queued")
    assert client.post(f"{BASE}/runs/{run['id']}/apply/").status_code == 409


def test_a_tenant_runs_what_ifs_but_cannot_apply_and_never_sees_others(tenant, other_tenant, admin, no_broker):
    volcano_cluster()
    mine = client_for(tenant)
    scenario = create_preset(mine)
    run = run_and_execute(mine, scenario["id"], ["clusterQueues.q2.weight=3"])
    assert mine.get(f"{BASE}/runs/{run['id']}/comparison/").status_code == 200

    assert mine.post(f"{BASE}/runs/{run['id']}/apply/").status_code == 403
    assert ClusterQueue.objects.get(name="q2").weight == 1 and not PolicyChange.objects.exists()

    others = client_for(other_tenant)
    assert others.get(f"{BASE}/runs/{run['id']}/").status_code == 404
    assert others.post(f"{BASE}/runs/{run['id']}/apply/").status_code == 404
    assert others.get(f"{BASE}/scenarios/{scenario['id']}/").status_code == 404
    assert others.get(f"{BASE}/runs/").json()["count"] == 0
    refused = others.post(
        f"{BASE}/runs/", {"scenario": scenario["id"], "edits": ["clusterQueues.q2.weight=2"]}, format="json"
    )
    assert refused.status_code == 400 and "scenario" in refused.json()
    assert client_for(admin).get(f"{BASE}/runs/").json()["count"] == 1  # admins see every run


def test_a_tenants_live_scenario_is_its_redacted_view(tenant):
    volcano_cluster()
    body = (
        client_for(tenant)
        .post(f"{BASE}/scenarios/", {"source": "live", "days": 0, "lookahead": "1h"}, format="json")
        .json()
    )
    assert body["redacted"] is True
    assert {ns["name"] for ns in body["document"]["namespaces"]} >= {"other-1"}


def test_anonymous_callers_get_401_and_users_without_a_role_403(stranger):
    assert client_for(None).get(f"{BASE}/runs/").status_code == 401
    assert client_for(stranger).get(f"{BASE}/runs/").status_code == 403
    assert (
        client_for(stranger)
        .post(f"{BASE}/scenarios/", {"source": "preset", "preset": "volcano-16cpu"}, format="json")
        .status_code
        == 403
    )


def test_the_schema_documents_the_playground(client):
    paths = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]
    for path in (
        f"{BASE}/scenarios/",
        f"{BASE}/runs/",
        f"{BASE}/runs/{{id}}/comparison/",
        f"{BASE}/runs/{{id}}/apply/",
        f"{BASE}/runs/{{id}}/results/",
        f"{BASE}/presets/",
    ):
        assert path in paths


def test_every_409_of_the_playground_carries_a_machine_readable_code(admin, no_broker):
    client = client_for(admin)
    scenario = create_preset(client)
    run = client.post(
        f"{BASE}/runs/", {"scenario": scenario["id"], "edits": ["clusterQueues.q2.weight=3"]}, format="json"
    ).json()

    answers = [
        client.get(f"{BASE}/runs/{run['id']}/comparison/"),
        client.get(f"{BASE}/runs/{run['id']}/results/"),
        client.post(f"{BASE}/runs/{run['id']}/apply/"),
    ]

    assert [(a.status_code, a.json()["code"]) for a in answers] == [(409, "run_not_finished")] * 3
