"""The what-if lane with real workers: the Procfile's control-loop worker and what-if worker run as
processes on the test broker and database. While a long simulation keeps the what-if worker busy,
a submitted workload is still admitted at once; the simulation is then stopped by its soft time
limit and the run says so."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from django.db import connection

from fairportal.celery import app
from playground.models import Run
from playground.tasks import run_playground
from queues.models import Workload, WorkloadState
from tests.factories import UserFactory
from tests.procfile import ROOT, procfile_command, wait_for
from tests.queues.api.conftest import client_for
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

BROKER = os.environ.get("TEST_CELERY_BROKER_URL", "redis://127.0.0.1:6379/5")
SOFT_LIMIT_SECONDS = 12


def database_url() -> str:
    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def procfile_workers(tmp_path) -> Iterator[Callable[[], str]]:
    """Starts the two workers; yields a function returning the end of their logs (for failures)."""
    with running_procfile_workers(tmp_path) as tails:
        yield tails


@contextmanager
def running_procfile_workers(tmp_path, *, flush: bool = True) -> Iterator[Callable[[], str]]:
    """The Procfile's ``worker`` and ``whatif`` roles as processes until the block ends; with
    ``flush`` the test broker is emptied first (without: messages sent before are served)."""
    assert app.conf.broker_url == BROKER, "run through `make test` (the workers use the test broker)"
    assert connection.vendor == "postgresql", "the workers share the test database: PostgreSQL"
    if flush:
        with app.connection_for_write() as broker:
            broker.default_channel.client.flushdb()  # no stale messages from earlier tests
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": BROKER,
        "CELERY_RESULT_BACKEND": BROKER,
        "WHATIF_SOFT_TIME_LIMIT": f"{SOFT_LIMIT_SECONDS}s",
        "ADMISSION_PASS_INTERVAL": "1h",  # only the pass a submission asks for: no beat here
    }
    logs = {name: tmp_path / f"{name}.log" for name in ("worker", "whatif")}
    workers = [
        subprocess.Popen(
            procfile_command(name),
            cwd=ROOT,
            env=env,
            start_new_session=True,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
        )
        for name, log in logs.items()
    ]

    def tails() -> str:
        return "\n".join(f"--- {name}\n" + "\n".join(log.read_text().splitlines()[-15:]) for name, log in logs.items())

    try:
        assert wait_for(lambda: len(app.control.ping(timeout=0.5)) >= 2, timeout=90), tails()
        yield tails
    finally:
        for worker in workers:
            os.killpg(worker.pid, signal.SIGTERM)
        for worker in workers:
            try:
                worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait()


def long_scenario() -> dict:
    """20,000 workloads over two days at 5 s ticks under TimeAware (its windowed history is the
    engine's slowest path): well over a minute of engine time, far past the 12 s soft limit even
    on a fast machine (8 s at 10 s ticks without TimeAware once the simulator skipped idle passes)."""
    return {
        "name": "long-what-if",
        "clock": {"horizon": "2d", "tick": "5s"},
        "resourceFlavors": [{"name": "default"}],
        "clusterQueues": [
            {
                "name": "cq",
                "admissionScope": {"admissionMode": "TimeAware"},
                "quotas": [{"flavor": "default", "resources": {"cpu": {"nominal": 64}}}],
            }
        ],
        "localQueues": [{"name": f"team-{i}/main", "clusterQueue": "cq"} for i in range(20)],
        "generators": [
            {
                "localQueue": f"team-{i}/main",
                "count": 1000,
                "seed": i,
                "interarrival": "1m",
                "duration": "10m",
                "podSets": [{"count": 1, "requests": {"cpu": "1"}}],
            }
            for i in range(20)
        ],
    }


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_given_a_long_what_if_running_when_a_workload_is_submitted_then_it_is_admitted_at_once(
    procfile_workers, monkeypatch
):
    # The sender puts its task's limits in the message (as the web process does in production,
    # from the same settings as the workers): this process was configured with the defaults.
    # Celery caches a task's send options on first use, so that cache is cleared too.
    monkeypatch.setattr(run_playground, "soft_time_limit", SOFT_LIMIT_SECONDS)
    monkeypatch.setattr(run_playground, "_exec_options", None)
    lq = make_local_queue("team-a", "main", make_cluster_queue(cpu="4"))
    client = client_for(UserFactory(username="tenant-with-a-big-question", is_staff=True))
    queued = client.post(
        "/api/v1/simulations/", {"scenario": long_scenario(), "run_in_background": True}, format="json"
    )
    assert queued.status_code == 202, queued.json()
    run_id = queued.json()["id"]
    assert wait_for(lambda: Run.objects.get(pk=run_id).status == "running", timeout=30), procfile_workers()

    submitted = time.monotonic()
    workload = submit(lq, "job-1", cpu="2", duration=None)  # on commit: an admission pass is sent

    admitted = wait_for(lambda: Workload.objects.get(pk=workload.pk).state == WorkloadState.ADMITTED, timeout=10)
    assert admitted, procfile_workers()
    waited = time.monotonic() - submitted
    assert waited < 5, f"admission waited {waited:.1f} s behind the what-if"
    assert Run.objects.get(pk=run_id).status == "running"  # the what-if was busy all along

    stopped = wait_for(lambda: Run.objects.get(pk=run_id).status == "failed", timeout=SOFT_LIMIT_SECONDS + 30)
    assert stopped, procfile_workers()
    assert Run.objects.get(pk=run_id).error.startswith(
        f"stopped: the run took longer than {SOFT_LIMIT_SECONDS} s (WHATIF_SOFT_TIME_LIMIT)"
    )
