"""Runs: validated before they are stored, executed once by a worker, with progress and outcome reuse."""

from __future__ import annotations

import pytest

from playground.documents import EditError
from playground.models import Outcome, Run
from playground.services import runs
from playground.services.scenarios import create_from_preset
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def volcano(admin):
    return create_from_preset("volcano-16cpu", owner=admin)


def test_given_valid_edits_when_started_then_the_run_is_queued_with_its_deltas_and_sent_on_commit(
    volcano, admin, no_broker, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        run = runs.start_run(volcano, edits=["clusterQueues.q2.weight=3"], owner=admin, title="q2 x3")
    assert (run.status, run.progress, run.title) == (Run.Status.QUEUED, 0.0, "q2 x3")
    assert [(d["kind"], d["name"], d["field"], d["before"], d["after"]) for d in run.deltas] == [
        ("clusterQueue", "q2", "weight", 1, 3)
    ]
    assert no_broker == [str(run.pk)]


@pytest.mark.parametrize(
    "edits, field, problem",
    [
        ([], "edits[0]", "add at least one edit"),
        (["clusterQueues.q9.weight=3"], "edits[0]", "no clusterQueues entry named 'q9'"),
        (
            ["namespaces.ns1.weight=2", "namespaces.ns2.weight=0"],
            "edits[1]",
            "namespaces[1].weight: must be greater than 0",
        ),
    ],
)
def test_given_bad_edits_when_started_then_the_edit_is_named_and_nothing_is_stored(
    volcano, admin, edits, field, problem
):
    with pytest.raises(EditError) as caught:
        runs.start_run(volcano, edits=edits, owner=admin)
    assert caught.value.field == field and problem in caught.value.problem
    assert not Run.objects.exists()


def test_given_a_queued_run_when_executed_then_both_sides_are_simulated_compared_and_stored(volcano, admin, no_broker):
    run = runs.start_run(volcano, edits=["clusterQueues.q2.weight=3"], owner=admin)
    done = runs.execute_run(run.pk)
    assert (done.status, done.phase, done.progress, done.error) == (Run.Status.SUCCEEDED, Run.Phase.DONE, 1.0, "")
    assert done.baseline.edits == [] and done.edited.edits == ["clusterQueues.q2.weight=3"]
    assert done.baseline.data["scenario"] == "volcano-16cpu"
    assert {k["key"] for k in done.comparison["kpis"]} >= {"jainIndex", "utilization.cpu", "wait.p50"}
    assert done.started_at <= done.finished_at


def test_a_run_delivered_twice_is_executed_once(volcano, admin, no_broker):
    run = runs.start_run(volcano, edits=["clusterQueues.q2.weight=3"], owner=admin)
    assert runs.execute_run(run.pk) is not None
    assert runs.execute_run(run.pk) is None
    assert Outcome.objects.count() == 2


def test_progress_is_written_to_the_run_as_the_simulations_advance(volcano, admin, no_broker, monkeypatch):
    monkeypatch.setattr(runs, "PROGRESS_WRITE_SECONDS", 0.0)
    seen: list[tuple[str, float]] = []
    real_simulate = runs.simulate

    def watching(scenario, progress):
        def hear(fraction: float) -> None:
            progress(fraction)
            row = Run.objects.values("phase", "progress").get()
            seen.append((row["phase"], row["progress"]))

        return real_simulate(scenario, progress=hear)

    monkeypatch.setattr(runs, "simulate", watching)
    run = runs.start_run(volcano, edits=["clusterQueues.q2.weight=3"], owner=admin)
    runs.execute_run(run.pk)

    baseline = [p for phase, p in seen if phase == Run.Phase.BASELINE]
    edited = [p for phase, p in seen if phase == Run.Phase.EDITED]
    assert baseline == sorted(baseline) and 0 <= baseline[0] < baseline[-1] == runs.BASELINE_SPAN[1]
    assert edited == sorted(edited) and runs.EDITED_SPAN[0] <= edited[0] < edited[-1] == runs.EDITED_SPAN[1]


def test_the_baseline_of_a_scenario_is_simulated_once_for_many_runs(volcano, admin, no_broker, monkeypatch):
    calls: list[str] = []
    real_simulate = runs.simulate
    monkeypatch.setattr(
        runs, "simulate", lambda scenario, progress: calls.append(scenario.name) or real_simulate(scenario)
    )
    first = runs.start_run(volcano, edits=["clusterQueues.q2.weight=3"], owner=admin)
    second = runs.start_run(volcano, edits=["clusterQueues.q2.weight=2"], owner=admin)
    runs.execute_run(first.pk)
    runs.execute_run(second.pk)
    assert len(calls) == 3
    assert Run.objects.get(pk=first.pk).baseline_id == Run.objects.get(pk=second.pk).baseline_id


def test_a_scenario_that_no_longer_validates_fails_the_run_with_the_field_named(volcano, admin, no_broker):
    run = runs.start_run(volcano, edits=["clusterQueues.q2.weight=3"], owner=admin)
    volcano.document["clusterQueues"][0]["weight"] = -5
    volcano.save()
    done = runs.execute_run(run.pk)
    assert done.status == Run.Status.FAILED
    assert done.error == "clusterQueues[0].weight: must not be negative, got -5"


def test_an_unexpected_error_fails_the_run_and_is_raised_for_the_worker_log(volcano, admin, no_broker, monkeypatch):
    run = runs.start_run(volcano, edits=["clusterQueues.q2.weight=3"], owner=admin)
    monkeypatch.setattr(runs, "compare", lambda *args, **kwargs: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        runs.execute_run(run.pk)
    failed = Run.objects.get(pk=run.pk)
    assert failed.status == Run.Status.FAILED and failed.error.startswith("internal error: ZeroDivisionError")


def test_a_lost_message_can_be_sent_again_while_queued(volcano, admin, no_broker):
    run = runs.start_run(volcano, edits=["clusterQueues.q2.weight=3"], owner=admin)
    assert runs.resend(run) is True and no_broker == [str(run.pk)]
    runs.execute_run(run.pk)
    assert runs.resend(Run.objects.get(pk=run.pk)) is False


@pytest.mark.django_db(transaction=True)  # the run's transaction really commits, then the publish fails
def test_a_broker_outage_marks_the_run_failed_instead_of_leaving_it_queued(dead_broker):
    admin = UserFactory(username="pg-admin-outage", is_staff=True)
    scenario = create_from_preset("volcano-16cpu", owner=admin)

    run = runs.start_run(scenario, edits=["clusterQueues.q2.weight=3"], owner=admin)

    stored = Run.objects.get(pk=run.pk)
    assert stored.status == Run.Status.FAILED and "could not be reached" in stored.error
    assert runs.resend(stored) is False
