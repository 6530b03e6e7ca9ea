"""Hostile input to the API: YAML alias bombs in ``set`` edits, errors that would echo huge values."""

from __future__ import annotations

import time

import pytest

from playground.models import Run
from tests.hostile import alias_bomb
from tests.queues.api.conftest import tiny_scenario

pytestmark = pytest.mark.django_db

SIM = "/api/v1/simulations/"


def test_given_a_set_edit_with_nested_aliases_then_a_small_400_names_the_edit(world, clients):
    started = time.perf_counter()
    response = clients["viewer_a"].post(
        SIM, {"scenario": tiny_scenario(), "set": [f"clusterQueues.cq-a.weight={alias_bomb()}"]}, format="json"
    )

    assert time.perf_counter() - started < 2
    assert response.status_code == 400
    assert len(response.content) < 1_000
    (message,) = response.json()["scenario"]["set[0].--set clusterQueues.cq-a.weight"]
    assert "anchors and aliases" in message
    assert not Run.objects.exclude(pk__in=[world.run_a.pk, world.playground_run_a.pk]).exists()


def test_given_a_huge_value_in_a_scenario_then_the_error_echoes_only_its_beginning(world, clients):
    scenario = tiny_scenario(clusterQueues=[{"name": "cq-a " + "x" * 500_000}])

    response = clients["admin"].post(SIM, {"scenario": scenario}, format="json")

    assert response.status_code == 400
    assert len(response.content) < 2_000


@pytest.mark.parametrize(
    ("path", "limit", "headers"),
    [
        ("/api/v1/workloads/", 65536, {"HTTP_IDEMPOTENCY_KEY": "big-1"}),
        ("/api/v1/simulations/", 1048576, {}),
        ("/api/v1/playground/scenarios/", 5242880, {}),
    ],
    ids=["workload", "simulation", "playground-scenario"],
)
def test_given_a_json_body_over_the_limit_then_the_documented_json_400(world, clients, path, limit, headers):
    body = '{"name": "' + "x" * (limit + 3_000_000) + '"}'  # over Django's 2.5 MB form limit too

    response = clients["admin"].post(path, body, content_type="application/json", **headers)

    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert response.json() == {
        "non_field_errors": [f"the request body is larger than the {limit} bytes this endpoint accepts"]
    }
