"""Races on PostgreSQL: two connections report or submit at the same moment; one wins.

These tests commit (``transaction=True``): each thread has its own database connection, and a
barrier releases the requests together.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction

from queues.models import AdmissionRecord, IdempotencyKey, Workload, WorkloadState
from tests.queues.api.conftest import build_world, client_for

pytestmark = pytest.mark.django_db(transaction=True)

WL = "/api/v1/workloads/"


def at_once(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls in parallel threads, released together; return their results in order."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int, call: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout=10)
            results[index] = call()
        except Exception as error:  # noqa: BLE001 - surfaced by the assertions below
            results[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


@pytest.fixture(autouse=True)
def admission_passes(monkeypatch) -> list[str]:
    """Committed submissions and endings ask for an admission pass; record them instead of
    publishing to a broker other test runs may share."""
    from queues import tasks

    requested: list[str] = []
    monkeypatch.setattr(tasks.admission_pass, "delay", lambda unit, **_: requested.append(unit))
    return requested


@pytest.fixture
def committed_world():
    return build_world()


@pytest.mark.parametrize("round_", range(3))
def test_given_two_executors_finishing_the_same_workload_then_it_counts_once(committed_world, round_):
    workload = committed_world.admitted_a
    executor = committed_world.users["executor"]
    first, second = client_for(executor), client_for(executor)
    url = f"{WL}{workload.pk}/finish/"

    responses = at_once(lambda: first.post(url), lambda: second.post(url))

    assert sorted(r.status_code for r in responses) == [200, 409]
    loser = next(r for r in responses if r.status_code == 409)
    assert loser.json()["state"] == WorkloadState.FINISHED
    stored = Workload.objects.get(pk=workload.pk)
    winner = next(r for r in responses if r.status_code == 200)
    assert stored.state == WorkloadState.FINISHED
    assert stored.wall_time_seconds == winner.json()["wall_time_seconds"]
    assert stored.finished_at.isoformat().replace("+00:00", "Z") == winner.json()["finished_at"]
    assert AdmissionRecord.objects.get(workload=workload).ended_at == stored.finished_at


def test_given_finish_and_cancel_racing_then_exactly_one_ending_is_recorded(committed_world):
    workload = committed_world.admitted_a
    executor = client_for(committed_world.users["executor"])
    editor = client_for(committed_world.users["editor_a"])

    responses = at_once(
        lambda: executor.post(f"{WL}{workload.pk}/finish/"),
        lambda: editor.post(f"{WL}{workload.pk}/cancel/"),
    )

    assert sorted(r.status_code for r in responses) == [200, 409]
    winner = next(r for r in responses if r.status_code == 200)
    assert Workload.objects.get(pk=workload.pk).state == winner.json()["state"]


def test_given_the_same_idempotent_submission_twice_at_once_then_one_workload(committed_world):
    editor = committed_world.users["editor_a"]
    first, second = client_for(editor), client_for(editor)
    body = {"name": "race", "local_queue": "team-a/main", "pod_sets": [{"requests": {"cpu": "1"}}]}

    def submit(client: Any) -> Callable[[], Any]:
        return lambda: client.post(WL, body, format="json", HTTP_IDEMPOTENCY_KEY="retry-42")

    responses = at_once(submit(first), submit(second))

    assert [r.status_code for r in responses] == [201, 201]
    assert responses[0].json()["id"] == responses[1].json()["id"]
    assert sum(1 for r in responses if r.get("Idempotent-Replayed") == "true") == 1
    assert Workload.objects.filter(name="race").count() == 1
    assert IdempotencyKey.objects.get(key="retry-42").workload.name == "race"


def test_given_a_report_that_read_admitted_when_another_commits_first_then_its_claim_writes_nothing(
    committed_world,
):
    """Deterministic interleaving: the contender has read 'Admitted' and its UPDATE waits on the
    row lock of a transaction that finishes the workload; once that commits, the contender's
    conditional UPDATE matches no row and it reports the conflict instead of writing."""
    from queues.services import lifecycle
    from queues.services.errors import InvalidTransition

    workload_id = committed_world.admitted_a.pk
    holding, release = threading.Event(), threading.Event()

    def finish_while_holding_the_row() -> None:
        try:
            with transaction.atomic():
                Workload.objects.select_for_update().get(pk=workload_id)
                holding.set()
                release.wait(timeout=10)
                lifecycle.finish_workload(workload_id)
        finally:
            connection.close()

    def contend() -> Any:
        try:
            return lifecycle.fail_workload(workload_id)
        except InvalidTransition as refusal:
            return refusal
        finally:
            connection.close()

    holder = threading.Thread(target=finish_while_holding_the_row)
    holder.start()
    assert holding.wait(timeout=10)
    outcome: list[Any] = []
    contender = threading.Thread(target=lambda: outcome.append(contend()))
    contender.start()
    wait_until_a_query_waits_on_a_lock()
    release.set()
    holder.join(timeout=10)
    contender.join(timeout=10)

    assert isinstance(outcome[0], InvalidTransition)
    assert outcome[0].state == WorkloadState.FINISHED
    assert Workload.objects.get(pk=workload_id).state == WorkloadState.FINISHED


def wait_until_a_query_waits_on_a_lock(timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
            )
            if cursor.fetchone()[0]:
                return
            time.sleep(0.02)
    raise AssertionError("the contending UPDATE never waited on the row lock")


def test_given_a_committed_finish_then_an_admission_pass_is_requested_for_the_freed_queue(
    committed_world, admission_passes
):
    admission_passes.clear()
    executor = client_for(committed_world.users["executor"])

    executor.post(f"{WL}{committed_world.admitted_a.pk}/finish/")

    assert len(admission_passes) == 1
