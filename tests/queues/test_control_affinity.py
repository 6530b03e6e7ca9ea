"""Unit affinity: each admission unit's pass goes to the control process of its shard.

The routing (ranks, queues, the router's hash fallback), the launcher's options, and the skipping
of requests a later pass answered run here without a worker; the layout itself runs as real
processes: the Procfile's ``worker`` (``fairportal.control_workers``, two solo workers) and the
single-queue command of the layout before, on the test broker and database.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.db import connection

from fairportal import control_workers
from fairportal.celery import app
from fairportal.schedule import hashed_shard
from queues import tasks
from queues.admission import load, passes
from queues.models import LocalQueue, Workload, WorkloadState
from queues.services import pass_requests
from tests.procfile import ROOT, procfile_command, wait_for
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

BROKER = os.environ.get("TEST_CELERY_BROKER_URL", "redis://127.0.0.1:6379/5")
needs_postgresql = pytest.mark.skipif(connection.vendor != "postgresql", reason="the database's clock and xmin")


def four_units() -> dict[str, LocalQueue]:
    """Four ClusterQueues outside any cohort (four units, ranked a, b, c, d), a LocalQueue each."""
    return {name: make_local_queue(f"team-{name}", "main", make_cluster_queue(name, cpu="4")) for name in "abcd"}


def route(key: str, **kwargs: object) -> str:
    return app.amqp.router.route({}, "queues.admission_pass", (key,), kwargs)["queue"].name


@pytest.mark.django_db
def test_given_units_then_each_goes_to_the_queue_of_its_rank_modulo_the_processes(settings):
    four_units()
    units = load.admission_units()
    settings.CONTROL_LOOP_PROCESSES = 2

    shards = pass_requests.shards(units)

    assert shards == {"clusterQueue:a": 0, "clusterQueue:b": 1, "clusterQueue:c": 0, "clusterQueue:d": 1}
    assert {key: route(key, shard=shard) for key, shard in shards.items()} == {
        key: f"control.{shard}" for key, shard in shards.items()
    }
    settings.CONTROL_LOOP_PROCESSES = 3
    assert pass_requests.shards(units)["clusterQueue:d"] == 0
    assert route("clusterQueue:d", shard=5) == "control.2"  # a shard beyond the processes wraps
    # Other control tasks stay on the control queue every process consumes.
    assert app.amqp.router.route({}, "queues.sample_usage", (), {})["queue"].name == "celery"


def test_given_a_message_without_a_shard_then_the_unit_key_hash_routes_it_alike_in_every_process():
    keys = [f"cohort:unit-{index}" for index in range(8)]
    script = f"from fairportal.schedule import hashed_shard; print([hashed_shard(k, 4) for k in {keys!r}])"
    printed = {
        subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in ("1", "2")
    }

    assert printed == {str([hashed_shard(key, 4) for key in keys])}


@pytest.mark.parametrize("option", ["--concurrency=4", "-c", "--queues=celery", "-Qcelery", "--pool=prefork"])
def test_given_an_option_the_launcher_sets_per_process_then_it_refuses_it_in_one_line(option, capsys):
    assert control_workers.main([option, "--loglevel=INFO"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and option.split("=")[0] in error and "CONTROL_LOOP_PROCESSES" in error


@needs_postgresql
@pytest.mark.django_db(transaction=True)
def test_given_requests_sent_before_a_pass_of_this_process_then_they_are_skipped_and_later_ones_run():
    lq = four_units()["a"]
    key = "clusterQueue:a"
    passes._ANSWERED.clear()
    before = load.database_clock()
    submit(lq, "first", cpu="1")
    after_first = load.database_clock()

    assert passes.run_requested_pass(key, before) is not None  # nothing answered it yet
    assert passes.run_requested_pass(key, after_first) is None  # the pass above started after it
    assert passes.run_requested_pass(key, before) is None
    second = submit(lq, "second", cpu="1")
    after_second = load.database_clock()
    result = passes.run_requested_pass(key, after_second)

    assert result is not None and result.admitted == [f"team-a/{second.name}"]
    assert passes.run_requested_pass(key, None) is not None  # a request without a time always runs
    assert Workload.objects.filter(state=WorkloadState.ADMITTED).count() == 2


# --- real processes -------------------------------------------------------------------------


def database_url() -> str:
    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Processes:
    """Worker commands started in their own session, logs in files, stopped as a group."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.running: dict[str, subprocess.Popen[bytes]] = {}
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": BROKER,
            "CELERY_RESULT_BACKEND": BROKER,
            "CONTROL_LOOP_PROCESSES": "2",
            "ADMISSION_PASS_INTERVAL": "1h",  # only the passes the test asks for: no beat here
        }

    def start(self, name: str, command: list[str]) -> subprocess.Popen[bytes]:
        log = (self.directory / f"{name}.log").open("a")
        process = subprocess.Popen(
            command, cwd=ROOT, env=self.env, start_new_session=True, stdout=log, stderr=subprocess.STDOUT
        )
        self.running[name] = process
        return process

    def stop(self, name: str) -> None:
        process = self.running.pop(name)
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def tails(self) -> str:
        return "\n".join(
            f"--- {log.name}\n" + "\n".join(log.read_text().splitlines()[-15:])
            for log in sorted(self.directory.glob("*.log"))
        )


def answering(names: set[str]) -> Callable[[], bool]:
    """Whether every node whose name starts with one of ``names`` answers a ping."""

    def check() -> bool:
        nodes = {node.split("@")[0] for reply in app.control.ping(timeout=0.5) for node in reply}
        return names <= nodes

    return check


@pytest.fixture
def processes(tmp_path) -> Iterator[Processes]:
    assert app.conf.broker_url == BROKER, "run through `make test` (the workers use the test broker)"
    assert connection.vendor == "postgresql", "the workers share the test database: PostgreSQL"
    with app.connection_for_write() as broker:
        broker.default_channel.client.flushdb()  # no stale messages from earlier tests
    started = Processes(tmp_path)
    try:
        yield started
    finally:
        for name in list(started.running):
            started.stop(name)


def ask(key: str, shard: int) -> dict[str, object]:
    """One pass of ``key`` sent to ``shard``'s queue, as the services send it; its report."""
    return tasks.admission_pass.apply_async((key,), {"shard": shard}, ignore_result=False).get(timeout=60)


def gone(pid: int) -> Callable[[], bool]:
    """Whether ``pid`` has exited (its sockets closed): absent, or a zombie its parent has not reaped."""

    def check() -> bool:
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
        except (FileNotFoundError, ProcessLookupError):
            return True

    return check


def waiting_in(queue: str) -> int:
    with app.connection_for_write() as broker:
        return int(broker.default_channel.client.llen(queue))


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_given_the_procfile_worker_then_each_units_passes_run_in_its_shards_process_and_survive_restarts(
    processes, settings
):
    settings.CONTROL_LOOP_PROCESSES = 2
    queues = four_units()
    shards = pass_requests.shards(load.admission_units())
    processes.start("worker", procfile_command("worker"))
    started = time.monotonic()
    assert wait_for(answering({"control-0", "control-1"}), timeout=90), processes.tails()
    submitted = [submit(lq, f"job-{name}", cpu="1") for name, lq in queues.items()]  # each asks for a pass
    assert wait_for(
        lambda: Workload.objects.filter(state=WorkloadState.ADMITTED).count() == len(submitted), timeout=60
    ), processes.tails()

    reports = {key: [ask(key, shard) for _ in range(3)] for key, shard in shards.items()}

    for key, shard in shards.items():
        assert {report["worker"].split("@")[0] for report in reports[key]} == {f"control-{shard}"}
        assert len({report["pid"] for report in reports[key]}) == 1  # the same process every time
    pids = {shard: reports[key][0]["pid"] for key, shard in shards.items()}
    assert pids[0] != pids[1]
    # A sender configured with more processes than the workers: its queue control.3 is consumed
    # too, by the process it falls to (3 = 1 + 1 x 2), not left waiting.
    settings.CONTROL_LOOP_PROCESSES = 4
    assert ask("clusterQueue:d", 3)["pid"] == pids[1]
    settings.CONTROL_LOOP_PROCESSES = 2

    # A worker killed outright is started again by the launcher, under the same name; the pass
    # asked for while it was gone waits in its queue and runs then. (Asked for once it has exited:
    # a message Redis hands to a consumer in the instant it dies is lost with it, and beat's next
    # fan-out, ADMISSION_PASS_INTERVAL later, asks again; there is no beat here.)
    time.sleep(max(0.0, started + control_workers.STARTUP_SECONDS + 1 - time.monotonic()))  # past start-up
    os.kill(int(pids[0]), signal.SIGKILL)
    assert wait_for(gone(int(pids[0])), timeout=30)
    late = submit(queues["a"], "while-restarting", cpu="1")  # unit a: shard 0
    assert wait_for(lambda: Workload.objects.get(pk=late.pk).state == WorkloadState.ADMITTED, timeout=90), (
        processes.tails()
    )
    again = ask("clusterQueue:a", shards["clusterQueue:a"])
    assert again["worker"].split("@")[0] == "control-0" and again["pid"] != pids[0]
    assert ask("clusterQueue:b", shards["clusterQueue:b"])["pid"] == pids[1]  # the other kept its process

    # The whole role down: requests wait in the shard queues, none is lost when it comes back.
    processes.stop("worker")
    down = [submit(queues[name], f"while-down-{name}", cpu="1") for name in "bc"]
    assert waiting_in("control.1") >= 1  # b's request, with nobody consuming it
    processes.start("worker", procfile_command("worker"))
    assert wait_for(
        lambda: all(Workload.objects.get(pk=w.pk).state == WorkloadState.ADMITTED for w in down), timeout=90
    ), processes.tails()
    assert waiting_in("control.0") == waiting_in("control.1") == 0


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_given_the_single_queue_worker_of_the_layout_before_then_it_runs_every_shards_passes(processes, settings):
    settings.CONTROL_LOOP_PROCESSES = 2
    queues = four_units()
    old = [sys.executable, "-m", "celery", "-A", "fairportal", "worker", "--queues", "celery"]
    processes.start("single-queue", [*old, "--hostname", "single@%h", "--concurrency=2"])
    assert wait_for(answering({"single"}), timeout=90), processes.tails()

    submitted = [submit(lq, f"job-{name}", cpu="1") for name, lq in queues.items()]  # shards 0 and 1

    assert wait_for(
        lambda: Workload.objects.filter(pk__in=[w.pk for w in submitted], state=WorkloadState.ADMITTED).count() == 4,
        timeout=60,
    ), processes.tails()
