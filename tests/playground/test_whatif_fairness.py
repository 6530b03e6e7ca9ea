"""The what-if lane serves users fairly: a message is a "work available" token and the worker
claims the next run in fair order (``runs.fair_order``), so alice's three queued runs delay bob's
one run by at most one of hers, whatever order the messages arrive in. On PostgreSQL (``SELECT
... FOR UPDATE SKIP LOCKED``)."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from fairportal.celery import app
from playground import tasks
from playground.models import Run
from playground.services import runs
from tests.factories import UserFactory, simulation_run
from tests.playground.test_whatif_workers import running_procfile_workers
from tests.procfile import wait_for
from tests.queues.api.conftest import client_for, tiny_scenario

pytestmark = pytest.mark.django_db(transaction=True)


def queue_runs() -> tuple[list[Run], Run]:
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    alices = [simulation_run(alice, document=tiny_scenario(), name=f"alice-{i}") for i in range(3)]
    return alices, simulation_run(bob, document=tiny_scenario(), name="bob")


def test_given_alices_three_runs_queued_before_bobs_then_bob_runs_second(settings):
    alices, bob = queue_runs()

    for message in [*alices, bob]:  # the broker delivers the messages first in, first out
        tasks.run_playground(str(message.pk))

    started = [run.scenario.name for run in Run.objects.select_related("scenario").order_by("started_at")]
    assert started == ["alice-0", "bob", "alice-1", "alice-2"]
    assert set(Run.objects.values_list("status", flat=True)) == {Run.Status.SUCCEEDED}


def test_given_a_user_with_a_run_running_then_another_users_head_is_next():
    alices, bob = queue_runs()
    Run.objects.filter(pk=alices[0].pk).update(status=Run.Status.RUNNING)

    assert list(runs.fair_order().values_list("pk", flat=True)) == [bob.pk, alices[1].pk]


def test_given_a_head_locked_by_another_worker_then_the_claim_skips_it_and_claims_once():
    alices, bob = queue_runs()
    locked, release = threading.Event(), threading.Event()

    def other_worker() -> None:
        try:
            with transaction.atomic():
                Run.objects.select_for_update().get(pk=alices[0].pk)
                locked.set()
                release.wait(10)
        finally:
            connection.close()

    worker = threading.Thread(target=other_worker)
    worker.start()
    try:
        assert locked.wait(10)
        claimed = runs.claim_next()  # alice's head is locked: her next run is not a head, so bob's
    finally:
        release.set()
        worker.join(10)

    assert claimed == bob.pk
    assert runs.claim_next() == alices[0].pk
    assert Run.objects.filter(status=Run.Status.RUNNING).count() == 2


def test_given_no_queued_run_then_a_token_does_nothing():
    assert tasks.run_playground("00000000-0000-0000-0000-000000000000") is None


def seconds_long_scenario(name: str) -> dict:
    """About a second of engine time on this project's machines."""
    generators = [
        {
            "name": "gen",
            "localQueue": "team-a/main",
            "count": 12_000,
            "seed": 1,
            "interarrival": "20s",
            "duration": "10m",
            "podSets": [{"requests": {"cpu": "1"}}],
        }
    ]
    return tiny_scenario(name=name, clock={"horizon": "1d", "tick": "1m"}, generators=generators)


@pytest.mark.celery_worker
def test_given_real_whatif_worker_when_alice_queues_three_then_bob_one_then_bob_runs_second(tmp_path):
    """All four runs are queued (their messages in the real broker) before the Procfile's workers
    start, so the order shows the lane's choice, not how long a run takes against how long the
    next request takes to arrive."""
    with app.connection_for_write() as broker:
        broker.default_channel.client.flushdb()  # no stale messages from earlier tests
    alice = client_for(UserFactory(username="alice-e2e", is_staff=True))
    bob = client_for(UserFactory(username="bob-e2e", is_staff=True))
    posted = [
        alice.post("/api/v1/simulations/", {"scenario": seconds_long_scenario(f"alice-{i}")}, format="json")
        for i in range(3)
    ]
    posted.append(bob.post("/api/v1/simulations/", {"scenario": seconds_long_scenario("bob")}, format="json"))
    assert [response.status_code for response in posted] == [202] * 4
    assert Run.objects.filter(status="queued").count() == 4

    with running_procfile_workers(tmp_path, flush=False) as tails:
        started = time.monotonic()
        done = wait_for(lambda: not Run.objects.filter(status__in=["queued", "running"]).exists(), timeout=120)
        assert done, tails()

    order = [run.scenario.name for run in Run.objects.select_related("scenario").order_by("started_at")]
    assert order == ["alice-0", "bob", "alice-1", "alice-2"], (order, time.monotonic() - started)
    assert set(Run.objects.values_list("status", flat=True)) == {Run.Status.SUCCEEDED}
