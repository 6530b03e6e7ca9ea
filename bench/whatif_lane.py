"""What-if lane benchmark: how long a new workload waits for admission while tenants' what-ifs run.

Run as ``python bench/whatif_lane.py`` from the repository root (``make bench-lane``). It uses
its own PostgreSQL database (``BENCH_DATABASE_URL``, default ``fp_bench_lane``; created,
migrated and emptied by the script) and the Redis database of ``BENCH_BROKER_URL`` (default
``redis://127.0.0.1:6379/0``; flushed), starts real Celery workers as processes and measures,
for each layout, the time from submitting a workload to its admission:

* baseline: the Procfile's workers, nothing else running;
* lanes: the Procfile's workers (``worker`` on ``celery``, ``whatif`` on ``whatif``) while two
  long simulations (about a minute of engine time each) keep the what-if worker busy;
* shared: the layout before the lanes: one worker with two processes serving both queues, the
  same two simulations queued first. Admission waits until a simulation ends, here at the soft
  time limit (``BENCH_SOFT_LIMIT``, default 30s; the old code had 600 s, so a tenant's run held
  admission for up to ten minutes).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import common  # noqa: E402 - bench/common.py, beside this script

DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/fp_bench_lane")
BROKER_URL = os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/0")
SOFT_LIMIT = os.environ.get("BENCH_SOFT_LIMIT", "30s")
os.environ.update(
    DATABASE_URL=DATABASE_URL,
    CELERY_BROKER_URL=BROKER_URL,
    CELERY_RESULT_BACKEND=BROKER_URL,
    DEBUG="true",
    WHATIF_SOFT_TIME_LIMIT=SOFT_LIMIT,
    ADMISSION_PASS_INTERVAL="1h",
)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairportal.settings")


common.ensure_database(DATABASE_URL)

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from fairportal.celery import app  # noqa: E402
from playground.models import Run  # noqa: E402
from playground.tasks import run_playground  # noqa: E402
from queues.models import ClusterQueue, LocalQueue, Namespace, Workload, WorkloadState  # noqa: E402
from tests.factories import simulation_run  # noqa: E402
from tests.fairportal.test_whatif_workers import long_scenario  # noqa: E402
from tests.procfile import procfile_command, wait_for  # noqa: E402
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit  # noqa: E402

SHARED = shlex.split(
    ".venv/bin/celery -A fairportal worker --queues celery,whatif --hostname shared@%h --loglevel=WARNING --concurrency=2"
)


def start(commands: list[list[str]]) -> list[subprocess.Popen]:
    with app.connection_for_write() as broker:
        broker.default_channel.client.flushdb()
    workers = [
        subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        for command in commands
    ]
    if not wait_for(lambda: len(app.control.ping(timeout=0.5)) >= len(commands), timeout=120):
        raise SystemExit("the workers did not start")
    return workers


def stop(workers: list[subprocess.Popen]) -> None:
    for worker in workers:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()


def admission_wait(lq: LocalQueue, name: str, *, what_ifs: int, busy: int) -> float:
    """Queue ``what_ifs`` long simulations, wait until ``busy`` of them run, then time a submission."""
    owner = get_user_model().objects.get(username="bench")
    runs = [simulation_run(owner, document=long_scenario()) for _ in range(what_ifs)]
    for run in runs:
        run_playground.delay(str(run.pk))
    if not wait_for(lambda: Run.objects.filter(status="running").count() >= busy, 60):
        raise SystemExit("the what-ifs did not start")
    submitted = time.monotonic()
    workload = submit(lq, name, cpu="1", duration=None)  # on commit: an admission pass is sent
    if not wait_for(lambda: Workload.objects.get(pk=workload.pk).state == WorkloadState.ADMITTED, timeout=900):
        raise SystemExit(f"{name} was not admitted within 15 minutes")
    return time.monotonic() - submitted


def main() -> None:
    call_command("migrate", verbosity=0)
    Run.objects.all().delete()
    Workload.objects.all().delete()
    LocalQueue.objects.all().delete()
    ClusterQueue.objects.all().delete()
    Namespace.objects.all().delete()
    get_user_model().objects.get_or_create(username="bench")
    lq = make_local_queue("team-bench", "main", make_cluster_queue("bench", cpu="1000"))
    lanes = [procfile_command("worker"), procfile_command("whatif")]
    rows = []
    for label, commands, what_ifs, busy in (
        ("baseline: Procfile workers, idle", lanes, 0, 0),
        ("lanes: Procfile workers, 2 what-ifs queued (1 running, 1 waiting)", lanes, 2, 1),
        ("shared: one 2-process worker for both queues, 2 what-ifs running", [SHARED], 2, 2),
    ):
        workers = start(commands)
        try:
            seconds = admission_wait(lq, f"job-{len(rows)}", what_ifs=what_ifs, busy=busy)
        finally:
            stop(workers)
            Run.objects.filter(status__in=("queued", "running")).update(status="failed")
        rows.append((label, seconds))
    baseline = rows[0][1]
    print(f"Admission wait of a new workload (soft time limit of a what-if: {SOFT_LIMIT})")
    print("| layout | seconds | vs baseline |")
    print("|---|---:|---:|")
    for label, seconds in rows:
        print(f"| {label} | {seconds:.2f} | {seconds / baseline:.1f}x |")


if __name__ == "__main__":
    main()
