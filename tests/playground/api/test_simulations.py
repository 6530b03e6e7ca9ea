"""What-if simulations over the API: every run queued for the what-if lane and polled; size limits."""

from __future__ import annotations

import pytest

from playground import tasks
from playground.models import Run
from playground.services import runs
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


def run_and_poll(client, body) -> dict:
    """POST, let the worker take the run (what the what-if worker does), then poll it."""
    posted = client.post(SIM, body, format="json")
    assert posted.status_code == 202, posted.content
    run_until_done(posted.json()["id"])
    return client.get(posted["Location"]).json()


def run_until_done(run_id: str) -> None:
    """The worker takes runs in fair order (the world's own queued runs may come first)."""
    for _ in range(10):
        tasks.run_playground(run_id)
        if Run.objects.get(pk=run_id).status != Run.Status.QUEUED:
            return


def test_given_small_scenario_then_202_queued_and_the_result_comes_back_when_polled(world, clients, sent):
    response = clients["viewer_a"].post(SIM, {"scenario": tiny_scenario()}, format="json")

    assert response.status_code == 202
    assert response.json()["status"] == "queued" and response.json()["result"] is None
    run = Run.objects.get(pk=response.json()["id"])
    assert (run.status, run.started_at, run.scenario.source) == (Run.Status.QUEUED, None, "api")
    # handed to the what-if lane (sent after commit), not simulated in the request

    run_until_done(str(run.pk))
    data = clients["viewer_a"].get(response["Location"]).json()
    assert (data["id"], data["status"], data["scenario"]) == (str(run.pk), "succeeded", "two-teams")
    assert set(data["result"]) == {"scenario", "events", "workloads", "series", "summary"}
    assert data["result"]["workloads"]["a-1"]["state"] == "Finished"


def test_given_a_post_then_the_simulator_never_runs_in_the_request(world, clients, sent, monkeypatch):
    from fairshare.simulation import simulator

    def refuse(*args, **kwargs):
        raise AssertionError("the simulator ran in the web process")

    monkeypatch.setattr(simulator, "simulate", refuse)
    monkeypatch.setattr(runs, "simulate", refuse)

    response = clients["viewer_a"].post(SIM, {"scenario": tiny_scenario(), "run_in_background": False}, format="json")

    assert response.status_code == 202
    assert Run.objects.get(pk=response.json()["id"]).status == Run.Status.QUEUED


def test_given_a_set_edit_then_the_run_uses_the_edited_policy(world, clients, sent):
    baseline = run_and_poll(clients["admin"], {"scenario": tiny_scenario()})["result"]
    edited = run_and_poll(
        clients["admin"],
        {"scenario": tiny_scenario(), "set": ["clusterQueues.cq-a.quotas.default.cpu.nominal=2"]},
    )["result"]

    assert baseline["workloads"]["a-1"]["admittedAt"] == 0
    assert edited["workloads"]["a-1"]["state"] != "Finished" or edited["workloads"]["a-1"]["admittedAt"] is None


def test_given_9000_local_queues_then_400_names_the_limit_before_anything_is_built(world, clients, monkeypatch):
    from fairshare.simulation import scenario as loader

    built: list[int] = []
    original = loader._local_queues
    monkeypatch.setattr(loader, "_local_queues", lambda *a: built.append(1) or original(*a))
    local_queues = [{"name": f"ns-{i}/main", "clusterQueue": "cq-a"} for i in range(9_000)]
    before = database_snapshot()

    response = clients["admin"].post(SIM, {"scenario": tiny_scenario(localQueues=local_queues)}, format="json")

    assert response.status_code == 400
    message = response.json()["scenario"]["localQueues"][0]
    assert "at most 2,000" in message and "9,000" in message
    assert built == [] and database_snapshot() == before


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({"namespaces": [{"name": f"n{i}"} for i in range(2_001)]}, "namespaces"),
        ({"clusterQueues": [{"name": f"c{i}"} for i in range(501)]}, "clusterQueues"),
        ({"cohorts": [{"name": f"c{i}"} for i in range(501)]}, "cohorts"),
        (
            {"generators": [{"localQueue": "team-a/main", "count": 10**12, "duration": "1m", "podSets": []}]},
            "generators[0].count",
        ),
    ],
    ids=["namespaces", "cluster-queues", "cohorts", "generator-count"],
)
def test_given_a_scenario_over_a_size_limit_then_400_names_it(world, clients, document, field):
    response = clients["admin"].post(SIM, {"scenario": tiny_scenario(**document)}, format="json")

    assert response.status_code == 400
    assert "at most" in response.json()["scenario"][field][0]


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
            "count": 201,
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

    run_until_done(run_id)  # what the worker does with the messages

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
