"""The control loop's metrics across processes (``PROMETHEUS_MULTIPROC_DIR``, ``queues.multiprocess``).

Real processes, as ``make run`` starts them: the directory emptied once by ``deploy/run-role
metrics-dir`` (what the Makefile and the systemd unit run), then the Procfile's ``worker`` (the
control-worker launcher, two solo Celery workers) admits work, and the Procfile's ``web``
(gunicorn, started after it) serves ``/metrics`` over HTTP with their counts; ``promtool check
metrics`` lints that scrape. A worker role restarted alone keeps the counts of the processes
before it (nothing but the launcher's step empties the directory).
"""

from __future__ import annotations

import os
import re
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from django.db import connection
from django.test import Client
from django.urls import reverse

from budgets.metrics import DEPRECATED_ALIASES
from fairportal import control_workers
from fairportal.celery import app
from queues import multiprocess
from queues.metrics import ADMITTED_WORKLOADS
from queues.models import Workload, WorkloadState
from tests.procfile import ROOT, procfile_command, wait_for
from tests.queues.interop.prometheus_server import binary, free_port
from tests.queues.loop_fixtures import submit
from tests.queues.test_control_affinity import BROKER, Processes, answering, four_units

UNITS = ROOT / "deploy" / "systemd"
ROLES = ("web", "worker", "whatif", "beat")


def metric_sum(body: str, name: str) -> float:
    """The sum of every sample of ``name`` (any labels) in a scrape body; 0 when there is none."""
    pattern = re.compile(rf"^{re.escape(name)}(?:\{{[^}}]*\}})? (\S+)$")
    return sum(float(match[1]) for line in body.splitlines() if (match := pattern.match(line)))


def reset_directory(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROOT / "deploy" / "run-role"), "metrics-dir"],
        env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(path)},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def stack(tmp_path) -> Iterator[tuple[Processes, Path, int]]:
    assert app.conf.broker_url == BROKER, "run through `make test` (the workers use the test broker)"
    assert connection.vendor == "postgresql", "the workers share the test database: PostgreSQL"
    with app.connection_for_write() as broker:
        broker.default_channel.client.flushdb()  # no stale messages from earlier tests
    directory = tmp_path / "metrics"
    port = free_port()
    started = Processes(tmp_path)
    started.env.update(
        PROMETHEUS_MULTIPROC_DIR=str(directory), BIND_ADDRESS="127.0.0.1", PORT=str(port), WEB_CONCURRENCY="2"
    )
    started.env.pop("METRICS_TOKEN", None)  # loopback: /metrics open without a token
    try:
        yield started, directory, port
    finally:
        for name in list(started.running):
            started.stop(name)


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:  # noqa: S310 - loopback
        return response.read().decode()


def answers(port: int) -> bool:
    try:
        scrape(port)
    except (urllib.error.URLError, ConnectionError):
        return False
    return True


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_given_the_procfile_worker_and_web_then_web_metrics_show_the_workers_admissions(stack, settings):
    processes, directory, port = stack
    settings.CONTROL_LOOP_PROCESSES = 2
    # A file a previous run left: the launcher's step empties the directory, once, before any process.
    directory.mkdir()
    (directory / "counter_oldhost-1.db").write_bytes(b"\0" * 8)
    (directory / "notes.txt").write_text("not a metrics file")
    assert reset_directory(directory).returncode == 0
    assert sorted(path.name for path in directory.iterdir()) == ["notes.txt"]

    queues = four_units()  # four units: two per shard
    processes.start("worker", procfile_command("worker"))
    assert wait_for(answering({"control-0", "control-1"}), timeout=90), processes.tails()
    submitted = [submit(lq, f"job-{name}", cpu="1") for name, lq in queues.items()]
    assert wait_for(
        lambda: Workload.objects.filter(state=WorkloadState.ADMITTED).count() == len(submitted), timeout=60
    ), processes.tails()
    # Each worker process wrote its own files, named <host>-<pid>: both shards admitted.
    writers = {path.stem.split("_", 1)[1] for path in directory.glob("counter_*.db")}
    assert len(writers) == 2 and all(re.fullmatch(r".+-\d+", writer) for writer in writers), writers

    processes.start("web", procfile_command("web"))  # started after the workers: it empties nothing
    assert wait_for(lambda: answers(port), timeout=60), processes.tails()
    body = scrape(port)

    assert metric_sum(body, "kueue_admitted_workloads_total") == 4
    assert metric_sum(body, "kueue_admission_wait_time_seconds_count") == 4
    assert metric_sum(body, "fairportal_admissions_total") == 4
    assert metric_sum(body, "kueue_admission_attempts_total") >= 2  # at least one admitting pass per shard
    assert metric_sum(body, "fairportal_admission_pass_duration_seconds_count") >= 2
    lint = subprocess.run(
        [binary("promtool"), "check", "metrics"], input=body, capture_output=True, text=True, timeout=60, check=False
    )
    problems = [line for line in (lint.stdout + lint.stderr).splitlines() if line.strip()]
    assert {line.split()[0] for line in problems} <= set(DEPRECATED_ALIASES), problems

    # The worker role restarted alone (new processes, the directory untouched): the counts of
    # the processes before stay in the sums, and the new processes' add to them.
    processes.stop("worker")
    processes.start("worker", procfile_command("worker"))
    assert wait_for(answering({"control-0", "control-1"}), timeout=90), processes.tails()
    late = submit(queues["a"], "after-restart", cpu="1")
    assert wait_for(lambda: Workload.objects.get(pk=late.pk).state == WorkloadState.ADMITTED, timeout=60), (
        processes.tails()
    )
    after = scrape(port)
    assert metric_sum(after, "kueue_admitted_workloads_total") == 5
    assert metric_sum(after, "kueue_admission_wait_time_seconds_count") == 5
    latest = {path.stem.split("_", 1)[1] for path in directory.glob("counter_*.db")}
    assert writers < latest

    # The exit bookkeeping: gunicorn's child_exit and the launcher drop a live gauge's file of
    # each process that exits (as prometheus-client's live gauges would leave them), counters stay.
    web_pids = re.findall(r"Booting worker with pid: (\d+)", (processes.directory / "web.log").read_text())
    live = [multiprocess.process_identifier(int(pid)) for pid in web_pids] + sorted(latest - writers)
    for name in live:
        (directory / f"gauge_livesum_{name}.db").write_bytes(b"")
    processes.stop("web")
    processes.stop("worker")
    assert len(web_pids) == 2 and not list(directory.glob("gauge_*.db")), processes.tails()
    assert {path.stem.split("_", 1)[1] for path in directory.glob("counter_*.db")} == latest


@pytest.mark.django_db
def test_given_the_directory_then_the_view_reads_the_files_not_this_process_memory(tmp_path, monkeypatch, settings):
    """The test process runs single-process (its instruments in memory, read when the variable is
    unset); with the variable set, ``/metrics`` reads only the directory: here empty."""
    settings.METRICS_TOKEN = ""
    settings.BIND_IS_LOOPBACK = True
    ADMITTED_WORKLOADS.labels(cluster_queue="cq-in-memory").inc()
    alone = Client().get(reverse("metrics")).content.decode()
    directory = tmp_path / "metrics"
    directory.mkdir()
    monkeypatch.setenv(multiprocess.ENV, str(directory))

    shared = Client().get(reverse("metrics"))

    assert 'kueue_admitted_workloads_total{cluster_queue="cq-in-memory"}' in alone
    assert shared.status_code == 200 and "kueue_admitted_workloads" not in shared.content.decode()


def test_given_a_process_that_exited_then_its_live_gauges_go_and_its_counters_stay(tmp_path, monkeypatch):
    monkeypatch.setenv(multiprocess.ENV, str(tmp_path))
    name = multiprocess.process_identifier(4242)
    for file in (
        f"gauge_livesum_{name}.db",
        f"counter_{name}.db",
        f"gauge_livesum_{multiprocess.process_identifier(7)}.db",
    ):
        (tmp_path / file).write_bytes(b"")

    multiprocess.process_exited(4242)

    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        [f"counter_{name}.db", f"gauge_livesum_{multiprocess.process_identifier(7)}.db"]
    )


def test_given_no_directory_variable_then_run_role_metrics_dir_refuses_in_one_line():
    result = subprocess.run(
        [str(ROOT / "deploy" / "run-role"), "metrics-dir"],
        env={key: value for key, value in os.environ.items() if key != multiprocess.ENV},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0 and result.stderr.count("\n") == 1 and multiprocess.ENV in result.stderr


def test_given_a_missing_directory_then_the_launcher_refuses_to_start_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(multiprocess.ENV, str(tmp_path / "absent"))

    assert control_workers.main(["--loglevel=INFO"]) == 2

    error = capsys.readouterr().err
    assert error.count("\n") == 1 and multiprocess.ENV in error and "not a directory" in error


def test_given_a_missing_directory_then_gunicorn_stops_before_any_worker_in_one_line(tmp_path):
    result = subprocess.run(
        procfile_command("web"),
        cwd=ROOT,
        env={**os.environ, multiprocess.ENV: str(tmp_path / "absent"), "PORT": str(free_port())},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert [line for line in result.stderr.splitlines() if multiprocess.ENV in line] == [
        f"error: {multiprocess.ENV}={str(tmp_path / 'absent')!r} is not a directory: create it (emptied) before "
        "starting the processes"
    ]
    assert "Booting worker" not in result.stderr


def test_given_the_makefile_then_make_run_empties_one_directory_and_hands_it_to_every_process():
    dry = subprocess.run(
        ["make", "-n", "run", "METRICS_DIR=/tmp/fp-metrics"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    reset = dry.index('PROMETHEUS_MULTIPROC_DIR="/tmp/fp-metrics" deploy/run-role metrics-dir')
    start = dry.index('PROMETHEUS_MULTIPROC_DIR="/tmp/fp-metrics" .venv/bin/honcho start -f Procfile')
    assert reset < start


def test_given_the_systemd_units_then_every_role_shares_the_metrics_units_directory():
    metrics = (UNITS / "fairportal-metrics.service").read_text()
    assert "RuntimeDirectory=fairportal-metrics\n" in metrics and "Type=oneshot\n" in metrics
    assert "ExecStart=/opt/fairportal/app/deploy/run-role metrics-dir\n" in metrics
    for role in ROLES:
        unit = (UNITS / f"fairportal-{role}.service").read_text()
        assert "Requires=fairportal-metrics.service\n" in unit
        assert re.search(r"^After=.*\bfairportal-metrics\.service\b", unit, re.MULTILINE)
        assert "Environment=PROMETHEUS_MULTIPROC_DIR=/run/fairportal-metrics\n" in unit
        assert "ReadWritePaths=/run/fairportal-metrics\n" in unit
        assert "RuntimeDirectory" not in unit  # a unit's own would be removed when it alone stops


def test_given_compose_then_every_app_container_mounts_one_tmpfs_volume_at_the_directory():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    volume = compose["volumes"]["metrics"]["driver_opts"]
    assert volume["type"] == "tmpfs" and "uid=10001" in volume["o"]
    for role in ROLES:
        service = compose["services"][role]
        directory = service["environment"][multiprocess.ENV]
        assert f"metrics:{directory}" in service["volumes"]
