"""Bad input gets a 400 whose errors name the field, and nothing stored changes.

Each case states the request, the path to the field in the error body (``quotas.0.nominal``)
and a fragment of the message. Every case runs as an admin, so no permission rule hides the
validation under test.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests.queues.api.conftest import World
from tests.queues.api.helpers import database_snapshot

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Bad:
    id: str
    method: str
    url: str  # formatted with the world, e.g. "/api/v1/cluster-queues/{w.cluster_queue.pk}/"
    body: Any
    field: str  # dotted path into the error body
    message: str  # a fragment of the message at that path


def workload(**overrides: Any) -> dict[str, Any]:
    body = {"name": "bad-one", "local_queue": "team-a/main", "pod_sets": [{"count": 1, "requests": {"cpu": "1"}}]}
    body.update(overrides)
    return body


def requests(**amounts: Any) -> list[dict[str, Any]]:
    return [{"count": 1, "requests": amounts}]


def quota(**row: Any) -> dict[str, Any]:
    return {"flavor": "default", "resource": "cpu", "nominal": "8", **row}


CQ = "/api/v1/cluster-queues/{w.cluster_queue.pk}/"
COHORT = "/api/v1/cohorts/{w.cohort.pk}/"
NS = "/api/v1/namespaces/{w.ns_a.pk}/"
LQ = "/api/v1/local-queues/{w.lq_a.pk}/"
WL = "/api/v1/workloads/"

# One case per line reads as a table: keep the formatter out of it.
# fmt: off
CASES = [
    # negative or non-numeric quantities
    Bad("negative-nominal", "patch", CQ, {"quotas": [quota(nominal="-1")]}, "quotas.0.nominal", "must not be negative"),
    Bad("negative-number-nominal", "patch", CQ, {"quotas": [quota(nominal=-2)]}, "quotas.0.nominal", "negative"),
    Bad("negative-borrowing", "patch", COHORT, {"quotas": [quota(borrowing_limit="-1Gi")]},
        "quotas.0.borrowing_limit", "negative"),
    Bad("negative-hard-quota", "patch", NS, {"hard_quota": {"cpu": "-4"}}, "hard_quota.cpu", "negative"),
    Bad("negative-request", "post", WL, workload(pod_sets=requests(cpu="-500m")), "pod_sets.0.requests.cpu", "negative"),
    Bad("word-quantity", "post", WL, workload(pod_sets=requests(memory="lots")), "pod_sets.0.requests.memory",
        "not a valid Kubernetes quantity"),
    Bad("boolean-quantity", "patch", CQ, {"quotas": [quota(nominal=True)]}, "quotas.0.nominal", "expected a quantity"),
    Bad("object-quantity", "patch", NS, {"hard_quota": {"cpu": {"value": 4}}}, "hard_quota.cpu", "expected a quantity"),
    Bad("lending-above-nominal", "patch", CQ, {"quotas": [quota(nominal="4", lending_limit="5")]},
        "quotas.0.lending_limit", "cannot exceed the nominal quota"),
    # unknown resources and flavors
    Bad("resource-without-quota", "post", WL, workload(pod_sets=requests(cpu="1", **{"example.com/fpga": "1"})),
        "pod_sets", "pod_sets[0].requests.example.com/fpga: ClusterQueue shared (behind LocalQueue team-a/main) has no quota for example.com/fpga"),
    Bad("invalid-resource-name", "post", WL, workload(pod_sets=requests(**{"not a resource!": "1"})),
        "pod_sets.0.requests.not a resource!", "not a valid resource name"),
    Bad("unknown-flavor", "patch", CQ, {"quotas": [quota(flavor="tpu-v9")]}, "quotas.0.flavor", "does not exist"),
    Bad("duplicate-quota-row", "patch", CQ, {"quotas": [quota(), quota(nominal="2")]}, "quotas.1.resource",
        "default/cpu is listed more than once"),
    Bad("unknown-local-queue", "post", WL, workload(local_queue="team-a/nope"), "local_queue", "does not exist"),
    Bad("malformed-local-queue", "post", WL, workload(local_queue="team-a"), "local_queue", "namespace/name"),
    # weights
    Bad("negative-cq-weight", "patch", CQ, {"weight": -1}, "weight", "weight must be 0 or more"),
    Bad("negative-cohort-weight", "patch", COHORT, {"weight": "-0.5"}, "weight", "weight must be 0 or more"),
    Bad("negative-lq-weight", "patch", LQ, {"weight": -3}, "weight", "weight must be 0 or more"),
    Bad("zero-namespace-weight", "patch", NS, {"weight": 0}, "weight", "weight must be greater than 0"),
    Bad("text-weight", "patch", CQ, {"weight": "heavy"}, "weight", "valid number"),
    # cycles and immutability
    Bad("cohort-own-parent", "patch", COHORT, {"parent": "org"}, "parent", "own parent"),
    Bad("cohort-cycle", "patch", COHORT, {"parent": "org-child"}, "parent", "would create a cycle: org -> org-child -> org"),
    Bad("lq-moves-with-workloads", "patch", LQ, {"cluster_queue": "spare"}, "cluster_queue",
        "cannot change while the LocalQueue holds workloads"),
    # missing fields
    Bad("workload-without-pod-sets", "post", WL, {"name": "x", "local_queue": "team-a/main"}, "pod_sets", "required"),
    Bad("workload-without-name", "post", WL, {"local_queue": "team-a/main", "pod_sets": requests(cpu="1")}, "name",
        "required"),
    Bad("workload-without-queue", "post", WL, {"name": "x", "pod_sets": requests(cpu="1")}, "local_queue", "required"),
    Bad("pod-set-without-requests", "post", WL, workload(pod_sets=[{"count": 2}]), "pod_sets.0.requests", "required"),
    Bad("empty-requests", "post", WL, workload(pod_sets=[{"requests": {}}]), "pod_sets.0.requests", "at least one"),
    Bad("zero-pods", "post", WL, workload(pod_sets=[{"count": 0, "requests": {"cpu": "1"}}]), "pod_sets.0.count",
        "greater than or equal to 1"),
    Bad("quota-without-nominal", "patch", CQ, {"quotas": [{"flavor": "default", "resource": "cpu"}]},
        "quotas.0.nominal", "required"),
    Bad("cq-without-name", "post", "/api/v1/cluster-queues/", {"cohort": "org"}, "name", "required"),
    Bad("budget-without-target", "post", "/api/v1/budgets/", {"name": "orphan", "allocated_hours": 5},
        "local_queue", "choose exactly one target"),
    Bad("duplicate-name", "post", WL, workload(name="a-pending"), "non_field_errors", "already exists"),
    Bad("invalid-name", "post", "/api/v1/namespaces/", {"name": "Team A"}, "name", "not a valid name"),
    # oversized values
    Bad("too-many-pod-sets", "post", WL, workload(pod_sets=[{"requests": {"cpu": "1"}}] * 9), "pod_sets",
        "no more than 8"),
    Bad("too-many-quota-rows", "patch", CQ, {"quotas": [quota(resource=f"example.com/r{i}") for i in range(65)]},
        "quotas", "no more than 64"),
    Bad("too-many-resources", "post", WL, workload(pod_sets=requests(**{f"example.com/r{i}": "1" for i in range(33)})),
        "pod_sets.0.requests", "at most 32 resources"),
    Bad("long-description", "patch", CQ, {"description": "x" * 201}, "description", "no more than 200"),
    Bad("long-name", "post", "/api/v1/resource-flavors/", {"name": "a" * 64}, "name", "no more than 63"),
    Bad("long-quantity", "post", WL, workload(pod_sets=requests(cpu="1" * 65)), "pod_sets.0.requests.cpu",
        "at most 64 characters"),
    Bad("total-overflows", "post", WL, workload(pod_sets=[{"count": 100000, "requests": {"memory": "9E"}}]),
        "pod_sets", "too large"),
    # only Kubernetes quantity syntax, bounded (decimal.Overflow was a 500; Python's digits were accepted)
    Bad("overflowing-request", "post", WL, workload(pod_sets=requests(cpu="1e999999")), "pod_sets.0.requests.cpu",
        "out of range"),
    Bad("overflowing-nominal", "patch", CQ, {"quotas": [quota(nominal="1e999999")]}, "quotas.0.nominal",
        "out of range"),
    Bad("overflowing-hard-quota", "patch", NS, {"hard_quota": {"cpu": "1e999999"}}, "hard_quota.cpu", "out of range"),
    Bad("arabic-indic-digits", "post", WL, workload(pod_sets=requests(cpu="١٢")), "pod_sets.0.requests.cpu",
        "not a valid Kubernetes quantity"),
    Bad("full-width-digits", "patch", COHORT, {"quotas": [quota(nominal="１２")]}, "quotas.0.nominal",
        "not a valid Kubernetes quantity"),
    Bad("digit-grouping", "post", WL, workload(pod_sets=requests(cpu="1_000")), "pod_sets.0.requests.cpu",
        "not a valid Kubernetes quantity"),
    Bad("beyond-bigint", "patch", CQ, {"quotas": [quota(nominal="9E")]}, "quotas.0.nominal", "too large"),
    Bad("huge-priority", "post", WL, workload(priority=2**31), "priority", "less than or equal to"),
    # budget periods and dates within what the accounting cycle can count (OverflowError, year 10000)
    Bad("huge-renewal-days", "patch", "/api/v1/budgets/{w.budget_a.pk}/", {"renewal": "days", "renewal_days": 2147483647},
        "renewal_days", "from 1 to 3660"),
    Bad("year-9999-anchor", "patch", "/api/v1/budgets/{w.budget_a.pk}/",
        {"renewal": "monthly", "anchor": "9999-12-15T00:00:00Z"}, "anchor", "between the years 1970 and 2200"),
    Bad("year-1-anchor", "patch", "/api/v1/budgets/{w.budget_a.pk}/",
        {"renewal": "monthly", "anchor": "0001-01-01T00:00:00Z"}, "anchor", "between the years 1970 and 2200"),
    # webhooks reach public receivers only (tests/budgets/test_webhooks.py has the rest)
    Bad("webhook-to-metadata", "patch", "/api/v1/budgets/{w.budget_a.pk}/",
        {"webhook_url": "http://169.254.169.254/latest/meta-data/"}, "webhook_url", "may not reach"),
    Bad("webhook-with-userinfo", "patch", "/api/v1/budgets/{w.budget_a.pk}/",
        {"webhook_url": "https://user:pw@93.184.215.14/hook"}, "webhook_url", "user name or password"),
]
# fmt: on


def error_at(errors: Any, path: str) -> list[str]:
    """The messages at a dotted path; keys may contain dots (resource names), so match greedily."""
    node = errors
    parts = path.split(".")
    while parts:
        for size in range(len(parts), 0, -1):
            key = ".".join(parts[:size])
            if isinstance(node, dict) and key in node:
                node, parts = node[key], parts[size:]
                break
        else:
            raise AssertionError(f"no error at {path!r} in {json.dumps(errors)}")
    return node if isinstance(node, list) else [json.dumps(node)]


@pytest.fixture
def child_cohort(world: World):
    from queues.models import Cohort

    return Cohort.objects.create(name="org-child", parent=world.cohort)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_given_bad_input_then_400_names_the_field_and_nothing_changes(world, clients, child_cohort, case):
    before = database_snapshot()

    response = getattr(clients["admin"], case.method)(case.url.format(w=world), case.body, format="json")

    assert response.status_code == 400, response.content
    messages = error_at(response.json(), case.field)
    assert any(case.message in message for message in messages), messages
    assert database_snapshot() == before


# -- the body itself ----------------------------------------------------------------------------


def test_given_body_over_the_limit_when_posting_then_400_and_nothing_stored(world, clients):
    before = database_snapshot()
    body = workload(pod_sets=[{"requests": {"cpu": "1"}, "name": "x" * 70_000}])

    response = clients["admin"].post(WL, body, format="json")

    assert response.status_code == 400
    assert "larger than the 65536 bytes" in response.json()["non_field_errors"][0]
    assert database_snapshot() == before


@pytest.mark.parametrize(
    "raw",
    ['{"name": ', "[" * 30_000 + "]" * 30_000, '{"weight": NaN}', "\x00"],
    ids=["truncated", "deeply-nested", "nan", "nul-byte"],
)
def test_given_unparsable_json_then_400_and_nothing_changes(world, clients, raw):
    before = database_snapshot()

    response = clients["admin"].patch(CQ.format(w=world), raw, content_type="application/json")

    assert response.status_code == 400
    assert "JSON parse error" in response.json()["detail"]
    assert database_snapshot() == before


def test_given_form_encoded_body_then_415(world, clients):
    response = clients["admin"].post(WL, "name=x", content_type="application/x-www-form-urlencoded")

    assert response.status_code == 415


def test_given_bad_filter_value_then_400_names_the_parameter(world, clients):
    response = clients["admin"].get(WL, {"state": "Sleeping"})

    assert response.status_code == 400
    assert "state" in response.json()


def test_given_bad_idempotency_key_then_400_names_the_header(world, clients):
    response = clients["admin"].post(WL, workload(), format="json", HTTP_IDEMPOTENCY_KEY="x" * 256)

    assert response.status_code == 400
    assert "Idempotency-Key" in response.json()


# -- found by fuzzing (Schemathesis), pinned here --------------------------------------------


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/api/v1/local-queues/", {"namespace": "team-a", "name": "x", "cluster_queue": "sha\x00red"}, "cluster_queue"),
        ("/api/v1/cohorts/", {"name": "x", "parent": "org\x00"}, "parent"),
        (WL, workload(local_queue="team-a/ma\x00in"), "local_queue"),
    ],
    ids=["nul-in-cluster-queue", "nul-in-parent", "nul-in-local-queue"],
)
def test_given_a_nul_character_in_a_related_name_then_400_not_a_database_error(world, clients, url, body, field):
    response = clients["admin"].post(url, body, format="json")

    assert response.status_code == 400
    assert field in response.json()


@pytest.mark.parametrize("offset", ["%2B21%3A35", "-23%3A59"])
def test_given_a_utc_offset_postgresql_cannot_store_when_filtering_then_it_is_converted(world, clients, offset):
    response = clients["admin"].get(f"{WL}?queued_before=0302-10-31T13%3A29%3A05.9{offset}")

    assert response.status_code == 200
    assert response.json()["count"] == 0


@pytest.mark.parametrize("path", ["/api/v1/workloads/0.5/finish/", "/api/v1/cohorts/1e-222/", "/api/v2/nothing/"])
def test_given_an_id_or_path_that_cannot_exist_then_a_json_404(world, clients, path):
    response = clients["admin"].post(path) if path.endswith("finish/") else clients["admin"].get(path)

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
