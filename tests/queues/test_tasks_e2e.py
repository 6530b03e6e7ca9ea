"""End to end on a real Redis broker with a real Celery worker (no eager mode, no mocks)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator

import pytest
from celery.contrib.testing.worker import start_worker

from fairportal.celery import app
from fairportal.schedule import CONTROL_QUEUE, WHATIF_QUEUE
from queues import tasks
from queues.models import LocalQueue, Workload, WorkloadState
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

BROKER = os.environ.get("TEST_CELERY_BROKER_URL", "redis://127.0.0.1:6379/5")


def wait_for(condition: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


@pytest.fixture
def celery_worker() -> Iterator[None]:
    # `make test` points the whole run at the test broker; changing it here would be too late
    # for producers that earlier tests already opened.
    assert app.conf.broker_url == BROKER, "run through `make test` or set CELERY_BROKER_URL to TEST_CELERY_BROKER_URL"
    with app.connection_for_write() as connection:
        connection.default_channel.client.flushdb()  # no stale messages from earlier tests
    # One in-process worker serves both lanes here (production runs one per queue: the Procfile).
    lanes = [CONTROL_QUEUE, WHATIF_QUEUE]
    with start_worker(
        app, pool="solo", queues=lanes, perform_ping_check=False, loglevel="WARNING", shutdown_timeout=10
    ):
        yield


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_given_real_worker_when_workload_submitted_then_task_admits_it_and_usage_rises(celery_worker):
    cq = make_cluster_queue(cpu="4")
    lq = make_local_queue("team-a", "main", cq)

    workload = submit(lq, "job-1", cpu="2", duration=None)  # on commit: admission_pass.delay(unit)

    assert wait_for(lambda: Workload.objects.get(pk=workload.pk).state == WorkloadState.ADMITTED)
    assert LocalQueue.objects.get(pk=lq.pk).consumed_resources == {}

    tasks.sample_usage.delay()  # the first sample starts the clock
    assert wait_for(lambda: LocalQueue.objects.get(pk=lq.pk).usage_last_update is not None)
    time.sleep(0.5)
    tasks.sample_usage.delay()

    assert wait_for(lambda: LocalQueue.objects.get(pk=lq.pk).consumed_resources.get("cpu", 0) > 0)
