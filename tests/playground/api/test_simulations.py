"""What-if simulations over the API: small runs answered at once, large ones queued and polled."""

from __future__ import annotations

import pytest

from playground import tasks
from playground.models import Run
from playground.services import runs, simulations
from tests.factories import simulation_run
from tests.queues.api.conftest import client_for, tiny_scenario
from tests.queues.api.helpers import database_snapshot

pytestmark = pytest.mark.django_db

SIM = "/api/v1/simulations/"


@pytest.fixture
def sent(monkeypatch) -> list[str]:
    """Run ids handed to the worker (recorded instead of published)."""
    ids: list[str] = []
    monkeypatch.setattr(tasks.run_playground, "delay", lambda run_id: ids.append(run_id))
    return ids


def test_given_small_scenario_then_the_result_comes_back_at_once_in_the_engine_contract(world, clients):
    response = clients["viewer_a"].post(SIM, {"scenario": tiny_scenario()}, format="json")

    assert response.status_code == 200
    data = response.json()
    assert (data["id"], data["status"], data["scenario"]) == (None, "succeeded", "two-teams")
    assert set(data["result"]) == {"scenario", "events", "workloads", "series", "summary"}
    assert data["result"]["workloads"]["a-1"]["state"] == "Finished"
    assert not Run.objects.exclude(pk__in=[world.run_a.pk, world.playground_run_a.pk]).exists()


def test_given_a_set_edit_then_the_run_uses_the_edited_policy(world, clients):
    baseline = clients["admin"].post(SIM, {"scenario": tiny_scenario()}, format="json").json()["result"]

    edited = (
        clients["admin"]
        .post(
            SIM,
            {"scenario": tiny_scenario(), "set": ["clusterQueues.cq-a.quotas.default.cpu.nominal=2"]},
            format="json",
        )
        .json()["result"]
    )

    assert baseline["workloads"]["a-1"]["admittedAt"] == 0
    assert edited["workloads"]["a-1"]["state"] != "Finished" or edited["workloads"]["a-1"]["admittedAt"] is None


@pytest.mark.parametrize(
    ("body", "field", "fragment"),
    [
        (
            {
                "scenario": tiny_scenario(
                    clusterQueues=[
                        {"name": "cq-a", "quotas": [{"flavor": "default", "resources": {"cpu": {"nominal": "-1"}}}]}
                    ]
                )
            },
            "clusterQueues[0].quotas[0].resources.cpu.nominal",
            "negative",
        ),
        ({"scenario": tiny_scenario(), "set": ["localQueues.team-z/main.weight=3"]}, "set[0]", "team-z/main"),
        (
            {
                "scenario": tiny_scenario(
                    clock={"tick": "1m"},
                    workloads=[
                        {"name": "forever", "localQueue": "team-a/main", "podSets": [{"requests": {"cpu": "1"}}]}
                    ],
                )
            },
            "clock.horizon",
            "required",
        ),
        ({"scenario": tiny_scenario(clock={"horizon": "400d", "tick": "1s"})}, "clock", "at most"),
    ],
    ids=["negative-quota", "unknown-set-path", "no-horizon", "too-many-ticks"],
)
def test_given_a_bad_scenario_then_400_names_the_field_path_and_nothing_is_stored(
    world, clients, body, field, fragment
):
    before = database_snapshot()

    response = clients["admin"].post(SIM, body, format="json")

    assert response.status_code == 400
    errors = response.json()["scenario"]
    key = next(k for k in errors if k.startswith(field))
    assert fragment in errors[key][0]
    assert database_snapshot() == before


def test_given_a_scenario_that_is_not_a_mapping_then_400_on_scenario(world, clients):
    response = clients["admin"].post(SIM, {"scenario": ["not", "a", "mapping"]}, format="json")

    assert response.status_code == 400
    assert "scenario" in response.json()


def test_given_a_large_scenario_then_202_and_the_run_is_sent_to_the_worker_after_commit(
    world, clients, sent, django_capture_on_commit_callbacks
):
    generators = [
        {
            "localQueue": "team-a/main",
            "count": simulations.INLINE_MAX_WORKLOADS + 1,
            "seed": 1,
            "interarrival": "1m",
            "duration": "5m",
            "podSets": [{"requests": {"cpu": "1"}}],
        }
    ]

    with django_capture_on_commit_callbacks(execute=True):
        response = clients["editor_a"].post(SIM, {"scenario": tiny_scenario(generators=generators)}, format="json")

    assert response.status_code == 202
    data = response.json()
    assert (data["status"], data["result"]) == ("queued", None)
    assert response["Location"] == f"{SIM}{data['id']}/"
    assert sent == [data["id"]]


def test_given_a_queued_run_when_the_worker_runs_it_then_polling_shows_the_result(world, clients, sent):
    queued = clients["editor_a"].post(SIM, {"scenario": tiny_scenario(), "run_in_background": True}, format="json")
    run_id = queued.json()["id"]

    tasks.run_playground(run_id)  # what the worker does with the message

    polled = clients["editor_a"].get(f"{SIM}{run_id}/").json()
    assert polled["status"] == "succeeded"
    assert polled["result"]["summary"]["workloads"]["finished"] == 2
    assert polled["started_at"] and polled["finished_at"]


def test_given_a_message_delivered_twice_then_the_run_executes_once(world, clients, sent):
    run_id = (
        clients["admin"].post(SIM, {"scenario": tiny_scenario(), "run_in_background": True}, format="json").json()["id"]
    )

    first = runs.execute_run(run_id)
    second = runs.execute_run(run_id)

    assert first is not None and first.status == Run.Status.SUCCEEDED
    assert second is None


def test_given_a_run_that_fails_in_the_engine_then_the_error_is_stored(world):
    document = tiny_scenario(
        clock={"tick": "1m"},
        workloads=[{"name": "forever", "localQueue": "team-a/main", "podSets": [{"requests": {"cpu": "1"}}]}],
    )
    run = simulation_run(world.users["admin"], document=document)

    finished = runs.execute_run(str(run.pk))

    assert finished.status == Run.Status.FAILED
    assert "clock.horizon" in finished.error
    assert finished.baseline is None
    assert client_for(world.users["admin"]).get(f"{SIM}{run.pk}/").json()["result"] is None


def test_given_a_run_of_another_user_then_404_and_absent_from_the_list(world):
    other = client_for(world.users["viewer_a"])

    assert other.get(f"{SIM}{world.run_a.pk}/").status_code == 404
    assert other.get(SIM).json()["count"] == 0
    assert "result" not in client_for(world.users["editor_a"]).get(SIM).json()["results"][0]
