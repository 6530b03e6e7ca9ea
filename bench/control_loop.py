"""Control-loop benchmark: the admission pass and the loop's ticks at 10,000 LocalQueues on PostgreSQL.

Run as ``python bench/control_loop.py`` from the repository root (``make bench-loop``). It fills a
seed database once (``fp_bench_loop_seed``: 8 admission units of 5 ClusterQueues, 2,500
namespaces, 10,000 LocalQueues, 100,000 admitted workloads of which 10,000 are due to finish, and
20,000 pending; ``--refill`` starts over) and copies it into a work database (``fp_bench_loop``)
before each group of measurements (``CREATE DATABASE ... TEMPLATE``), so every run starts from the
same state. It then calls the services directly and prints, each next to a baseline measured in
the same run just before it (a plain SQL statement over the same rows; machines here are noisy):

- one usage sample (10,000 LocalQueues, 100,000 admitted), from the admitted-usage counters,
  compared with the row-by-row sample of the same state (rolled back),
- the first pass after the fill (writes every pending reason), then an idle pass (nothing fits),
  with the snapshot and the engine's plan timed separately,
- completing the 10,000 workloads whose run is over (the counters checked against the rows
  after), wall-time accounting,
- the pass that admits into the freed capacity (>= 2,000 admissions) and its admissions per second,
- throughput with 1, 2 and 4 real solo ``celery worker`` processes on a real Redis broker, with
  each unit's passes routed to its own process (the Procfile's ``fairportal.control_workers``) and,
  as the same-run baseline, at random (the single-queue layout before): one admission-pass task
  per unit, rounds of the first passes after the workers start (cold: what a restart costs), an
  idle round and the round after the same freed capacity; the workers' CPU beside the wall time.

Database names and the broker come from ``BENCH_DATABASE_URL``, ``BENCH_SEED_DATABASE`` and
``BENCH_BROKER_URL`` (use your own names on a shared machine). Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/fp_bench_loop")
SEED_DATABASE = os.environ.get("BENCH_SEED_DATABASE", urlparse(DATABASE_URL).path.lstrip("/") + "_seed")
BROKER_URL = os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/14")
os.environ["DATABASE_URL"] = DATABASE_URL
os.environ["CELERY_BROKER_URL"] = BROKER_URL
os.environ["CELERY_RESULT_BACKEND"] = BROKER_URL
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-" + "x" * 50)  # settings require 50 characters
os.environ.setdefault("CLUSTER_BACKEND", "simulated")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairportal.settings")

SEED = 20261125
UNITS = 8  # root cohorts: one admission pass each
QUEUES_PER_UNIT = 5
NAMESPACES = 2_500
LOCAL_QUEUES_PER_NAMESPACE = 4  # 10,000 LocalQueues
ADMITTED = 100_000
DUE = 10_000  # of the admitted, their run is over
PENDING = 20_000
CORE = 1000  # millis
GIB = 2**30 * 1000
WORKER_COUNTS = (1, 2, 4)
ADMISSIONS_TARGET = 5_000  # per second, all writes included


# --- databases --------------------------------------------------------------------------------


def _admin_url() -> str:
    return urlparse(DATABASE_URL)._replace(path="/postgres").geturl()


def _work_name() -> str:
    return urlparse(DATABASE_URL).path.lstrip("/")


def _admin(sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    """A statement on the server's ``postgres`` database (creating and copying databases)."""
    import psycopg

    with psycopg.connect(_admin_url(), autocommit=True) as connection:
        cursor = connection.execute(sql, params or [])
        return cursor.fetchall() if cursor.description else []


def _close_django() -> None:
    from django.db import connections

    connections.close_all()


def fresh_copy() -> None:
    """The work database, a fresh copy of the seed, migrated to this code's models."""
    from django.core.management import call_command

    _close_django()
    _admin(f'DROP DATABASE IF EXISTS "{_work_name()}" WITH (FORCE)')
    _admin(f'CREATE DATABASE "{_work_name()}" TEMPLATE "{SEED_DATABASE}"')
    call_command("migrate", verbosity=0, interactive=False)
    _sql("ANALYZE")


def prepare_seed(refill: bool) -> None:
    """Fill the seed database once (through the work database, then copied as the template)."""
    from django.core.management import call_command

    exists = _admin("SELECT 1 FROM pg_database WHERE datname = %s", [SEED_DATABASE])
    if exists and not refill:
        return
    _close_django()
    _admin(f'DROP DATABASE IF EXISTS "{SEED_DATABASE}" WITH (FORCE)')
    _admin(f'DROP DATABASE IF EXISTS "{_work_name()}" WITH (FORCE)')
    _admin(f'CREATE DATABASE "{_work_name()}"')
    call_command("migrate", verbosity=0, interactive=False)
    started = time.perf_counter()
    print(f"filling the seed database {SEED_DATABASE} (once; --refill to start over) ...", flush=True)
    fill(random.Random(SEED))
    _sql("ANALYZE")
    print(f"filled in {time.perf_counter() - started:.0f} s", flush=True)
    _close_django()
    _admin(f'CREATE DATABASE "{SEED_DATABASE}" TEMPLATE "{_work_name()}"')


def _sql(statement: str, params: list[Any] | None = None) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(statement, params or [])
        return cursor.rowcount


def fill(rng: random.Random) -> None:
    """Eight units, each full: admitted usage equals nominal quota, so nothing pending fits yet."""
    from django.utils import timezone

    from queues.models import (
        AdmissionMode,
        AdmissionRecord,
        ClusterQueue,
        ClusterQueueQuota,
        Cohort,
        LocalQueue,
        Namespace,
        NamespaceQuota,
        ResourceFlavor,
        Workload,
        WorkloadResource,
        WorkloadState,
    )

    now = timezone.now().replace(microsecond=0)
    default = ResourceFlavor.objects.create(name="default")
    modes = [AdmissionMode.USAGE_BASED, AdmissionMode.DOMINANT_RESOURCE_SHARE, AdmissionMode.USAGE_BASED, ""]
    roots = Cohort.objects.bulk_create(
        [
            Cohort(name=f"unit-{u}", admission_mode=AdmissionMode.TIME_AWARE if u == UNITS - 1 else modes[u % 4])
            for u in range(UNITS)
        ]
    )
    queues = ClusterQueue.objects.bulk_create(
        [
            ClusterQueue(name=f"cq-{u}-{q}", cohort=roots[u], weight=Decimal(1 + q % 2))
            for u in range(UNITS)
            for q in range(QUEUES_PER_UNIT)
        ]
    )
    per_queue = ADMITTED // len(queues)
    ClusterQueueQuota.objects.bulk_create(
        [
            quota
            for queue in queues
            for quota in (
                ClusterQueueQuota(cluster_queue=queue, flavor=default, resource="cpu", nominal=per_queue * CORE),
                ClusterQueueQuota(cluster_queue=queue, flavor=default, resource="memory", nominal=per_queue * 8 * GIB),
            )
        ]
    )
    namespaces = Namespace.objects.bulk_create(
        [Namespace(name=f"team-{n:04d}", weight=Decimal(rng.choice(["0.5", "1", "1", "2"]))) for n in range(NAMESPACES)]
    )
    NamespaceQuota.objects.bulk_create(
        [NamespaceQuota(namespace=ns, resource="cpu", hard=400 * CORE) for ns in namespaces]
    )
    # A namespace lives in one unit (hard quotas span units, and so would the passes' locks).
    local_queues = LocalQueue.objects.bulk_create(
        [
            LocalQueue(
                namespace=ns,
                name=f"q{i}",
                cluster_queue=queues[(n % UNITS) * QUEUES_PER_UNIT + (n // UNITS + i) % QUEUES_PER_UNIT],
                weight=Decimal(rng.choice(["1", "1", "2"])),
            )
            for n, ns in enumerate(namespaces)
            for i in range(LOCAL_QUEUES_PER_NAMESPACE)
        ]
    )
    by_queue: dict[int, list[LocalQueue]] = {}
    for lq in local_queues:
        by_queue.setdefault(lq.cluster_queue_id, []).append(lq)

    workloads: list[Workload] = []
    index = 0
    for queue in queues:  # exactly per_queue cores admitted in every ClusterQueue
        lqs = by_queue[queue.id]
        for slot in range(per_queue):
            lq = lqs[slot % len(lqs)]
            due = slot % (ADMITTED // DUE) == 0
            admitted_at = now - (timedelta(hours=2) if due else timedelta(seconds=rng.randrange(1800)))
            workloads.append(
                Workload(
                    namespace_id=lq.namespace_id,
                    local_queue=lq,
                    name=f"run-{index:06d}",
                    priority=rng.choice([0, 0, 10, 100]),
                    pod_sets=[{"name": "main", "count": 1, "requests": {"cpu": CORE, "memory": 4 * GIB}}],
                    state=WorkloadState.ADMITTED,
                    created_at=admitted_at - timedelta(minutes=5),
                    queued_at=admitted_at - timedelta(minutes=5),
                    admitted_at=admitted_at,
                    started_at=admitted_at,
                    cluster_queue=queue,
                    flavor_assignment={"cpu": "default", "memory": "default"},
                    duration_seconds=3600 if due else 30 * 86400,
                )
            )
            index += 1
    for p in range(PENDING):
        lq = local_queues[rng.randrange(len(local_queues))]
        queued = now - timedelta(seconds=rng.randrange(86400))
        cores = rng.choice([4, 5, 5, 6])
        workloads.append(
            Workload(
                namespace_id=lq.namespace_id,
                local_queue=lq,
                name=f"wait-{p:06d}",
                priority=rng.choice([0, 0, 10, 100]),
                pod_sets=[{"name": "main", "count": 1, "requests": {"cpu": cores * CORE, "memory": cores * 4 * GIB}}],
                state=WorkloadState.PENDING,
                created_at=queued,
                queued_at=queued,
                duration_seconds=3600,
            )
        )
    created = Workload.objects.bulk_create(workloads, batch_size=5000)
    WorkloadResource.objects.bulk_create(
        [
            WorkloadResource(
                workload_id=w.id,
                resource=resource,
                amount=amount,
                flavor=default if w.state == WorkloadState.ADMITTED else None,
            )
            for w in created
            for resource, amount in w.pod_sets[0]["requests"].items()
        ],
        batch_size=10000,
    )
    AdmissionRecord.objects.bulk_create(
        [
            AdmissionRecord(
                workload_id=w.id,
                namespace_id=w.namespace_id,
                local_queue_id=w.local_queue_id,
                cluster_queue_id=w.cluster_queue_id,
                assignment=w.flavor_assignment,
                requests=w.pod_sets[0]["requests"],
                admitted_at=w.admitted_at,
            )
            for w in created
            if w.state == WorkloadState.ADMITTED
        ],
        batch_size=10000,
    )
    from queues.services import usage_counters

    usage_counters.check(repair=True)  # bulk_create bypasses the transitions that keep the counters


# --- measuring --------------------------------------------------------------------------------


_LAST_CPU = [0.0]


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    """Wall seconds of ``call``; the CPU seconds this process spent in it are kept for the table
    (on a shared machine the wall time includes waiting for a core, the CPU time does not)."""
    started, cpu = time.perf_counter(), time.process_time()
    result = call()
    _LAST_CPU[0] = time.process_time() - cpu
    return time.perf_counter() - started, result


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str, str, str]] = []

    def add(
        self,
        label: str,
        seconds: float,
        baseline: float | None,
        target: str = "",
        note: str = "",
        cpu: float | None = None,
    ) -> None:
        ratio = f"{seconds / baseline:.1f}x" if baseline else ""
        cpu_text = "" if cpu is None else f"{cpu * 1000:,.0f} ms"
        self.rows.append((label, f"{seconds * 1000:,.0f} ms", ratio, cpu_text, target, note))
        print(f"  {label:58} {seconds * 1000:10,.0f} ms {ratio:>8} {cpu_text:>10}  {target:12} {note}", flush=True)

    def markdown(self) -> str:
        lines = [
            "| step | time | vs baseline | Python CPU | target | note |",
            "|---|---:|---:|---:|---|---|",
        ]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines)


def _states() -> dict[str, int]:
    from django.db.models import Count

    from queues.models import Workload

    return dict(Workload.objects.values_list("state").annotate(n=Count("id")).values_list("state", "n"))


def _sample_state() -> list[tuple[Any, ...]]:
    """What a usage sample stored: every level's state and the series, JSON as text."""
    from django.db import connection

    rows: list[tuple[Any, ...]] = []
    with connection.cursor() as cursor:
        for table in ("queues_localqueue", "queues_namespace", "queues_clusterqueue", "queues_cohort"):
            cursor.execute(
                f"SELECT '{table}', id, consumed_resources::text, entry_penalty::text, usage_last_update, "
                f"weighted_share FROM {table} ORDER BY id"
            )
            rows += cursor.fetchall()
        cursor.execute(
            "SELECT kind, object_id, sampled_at, allocated::text, consumed::text, capacity::text, weighted_share, "
            "admitted_count, pending_count FROM queues_usagesample ORDER BY kind, object_id, sampled_at"
        )
        rows += cursor.fetchall()
    return rows


def _sample_rolled_back(moment: Any) -> tuple[float, list[tuple[Any, ...]]]:
    """The row-by-row sample (the engine on every row: SQLite's path) at ``moment``, timed, its
    result read, then rolled back: the reference the set-based sample must match."""
    from django.db import transaction

    from queues.services import usage

    with transaction.atomic():
        seconds = timed(lambda: usage.sample_usage(now=moment, set_based=False))[0]
        state = _sample_state()
        transaction.set_rollback(True)
    return seconds, state


def services_run(table: Table) -> None:
    from django.conf import settings
    from django.utils import timezone

    from fairportal import process
    from fairshare.admission.planner import plan as plan_admissions
    from queues.admission import load as bridge
    from queues.admission import passes as admission
    from queues.models import Workload, WorkloadState
    from queues.services import cluster, transitions, usage, usage_counters

    fresh_copy()
    print(f"  work database {_work_name()}: {_states()}", flush=True)
    # As a control process: full garbage collections only between tasks, at most once a minute
    # (none falls inside the rows below; the last row is what one costs).
    process.schedule_full_collections()

    base = timed(lambda: _sql("UPDATE queues_localqueue SET consumed_resources = consumed_resources"))[0]
    table.add("baseline: plain UPDATE of the 10,000 LocalQueue rows", base, base)
    moment = timezone.now()
    row_by_row, reference = _sample_rolled_back(moment)
    seconds, _ = timed(lambda: usage.sample_usage(now=moment))
    same = _sample_state() == reference
    table.add(
        "usage sample (10,000 LQs, 100,000 admitted)",
        seconds,
        base,
        "<= 500 ms",
        f"reads the counters; row by row (rolled back): {row_by_row * 1000:,.0f} ms, "
        f"{'the same values' if same else 'VALUES DIFFER'}",
        cpu=_LAST_CPU[0],
    )

    read = timed(
        lambda: list(
            Workload.objects.filter(state=WorkloadState.PENDING).values_list("id", "pod_sets", "reason__message")
        )
    )[0]
    table.add("baseline: plain SELECT of the 20,000 pending rows", read, read)
    seconds, results = timed(lambda: admission.run_all_admission_passes())
    table.add(
        "first pass after the fill (writes every pending reason)",
        seconds,
        read,
        "",
        f"{sum(len(r.admitted) for r in results)} admitted",
        cpu=_LAST_CPU[0],
    )
    seconds, results = timed(lambda: admission.run_all_admission_passes())
    table.add(
        "idle pass: 8 units, 20,000 pending, nothing fits",
        seconds,
        read,
        "<= 500 ms",
        f"{sum(len(r.admitted) for r in results)} admitted",
        cpu=_LAST_CPU[0],
    )

    snap_total = plan_total = snap_cpu = plan_cpu = 0.0
    for unit in bridge.admission_units():
        moment = timezone.now()
        snap, loaded = timed(lambda: bridge.build_snapshot(unit, settings.FAIR_SHARING))  # noqa: B023 - called at once
        snap_cpu += _LAST_CPU[0]
        plan_s, _ = timed(lambda: plan_admissions(loaded.snapshot, moment.timestamp()))  # noqa: B023 - called at once
        plan_cpu += _LAST_CPU[0]
        snap_total += snap
        plan_total += plan_s
    table.add("  of which build_snapshot (8 units)", snap_total, read, "<= 300 ms", cpu=snap_cpu)
    table.add("  of which engine plan (8 units)", plan_total, read, cpu=plan_cpu)

    due_ids = list(
        Workload.objects.filter(state=WorkloadState.ADMITTED, duration_seconds=3600).values_list("id", flat=True)
    )
    base = timed(lambda: _sql("UPDATE queues_workload SET finished_at = finished_at WHERE id = ANY(%s)", [due_ids]))[0]
    table.add(f"baseline: plain UPDATE of the {len(due_ids):,} due rows", base, base)
    seconds, done = timed(lambda: cluster.complete_due_workloads())
    exact = not usage_counters.check()
    table.add(
        f"complete_due_workloads ({len(done):,} finished)",
        seconds,
        base,
        "<= 1,000 ms",
        f"usage counters {'equal the rows' if exact else 'DIFFER FROM THE ROWS'} after",
        cpu=_LAST_CPU[0],
    )

    base = timed(
        lambda: _sql("UPDATE queues_workload SET wall_time_seconds = wall_time_seconds WHERE state = 'Admitted'")
    )[0]
    table.add("baseline: plain UPDATE of the 90,000 admitted rows", base, base)
    if hasattr(cluster, "account_wall_time"):  # before issue 12: a task refreshed every running row
        seconds, _ = timed(lambda: cluster.account_wall_time())
        table.add("account_wall_time (90,000 admitted)", seconds, base, "<= 200 ms", cpu=_LAST_CPU[0])
    else:
        table.add(
            "wall-time accounting (90,000 admitted)", 0.0, base, "<= 200 ms", "derived on read: no task, no writes"
        )

    seconds, results = timed(lambda: admission.run_all_admission_passes())
    pass_cpu = _LAST_CPU[0]
    admitted_keys = [key for result in results for key in result.admitted]
    names = [key.split("/", 1)[1] for key in admitted_keys]
    admitted_ids = list(Workload.objects.filter(name__in=names).values_list("id", flat=True))
    base = timed(lambda: _sql("UPDATE queues_workload SET state = state WHERE id = ANY(%s)", [admitted_ids]))[0]
    table.add(f"baseline: plain UPDATE of the {len(admitted_ids):,} rows it admitted", base, base)
    rate = len(admitted_keys) / seconds if seconds else 0.0
    table.add(
        f"pass after capacity frees: {len(admitted_keys):,} admitted",
        seconds,
        base,
        f">= {ADMISSIONS_TARGET:,}/s",
        f"{rate:,.0f} admissions/s",
        cpu=pass_cpu,
    )
    seconds, results = timed(lambda: admission.run_all_admission_passes())
    table.add(
        "the next pass (rewrites the reasons the admissions changed)",
        seconds,
        read,
        "",
        f"{sum(len(r.admitted) for r in results)} admitted",
        cpu=_LAST_CPU[0],
    )
    seconds, results = timed(lambda: admission.run_all_admission_passes())
    table.add(
        "the pass after that (idle again)",
        seconds,
        read,
        "<= 500 ms",
        f"{sum(len(r.admitted) for r in results)} admitted",
        cpu=_LAST_CPU[0],
    )
    seconds, _ = timed(gc.collect)
    table.add(
        "full garbage collection, with every unit's snapshot kept",
        seconds,
        read,
        "",
        "a control process runs one between tasks, at most once a minute",
        cpu=_LAST_CPU[0],
    )
    if hasattr(transitions, "admit_many"):
        admission_writes(table)


def admission_writes(table: Table) -> None:
    """The write path alone: claim 2,000 pending workloads with admit_many, rolled back after."""
    from django.db import transaction
    from django.utils import timezone

    from queues.models import ResourceFlavor, Workload, WorkloadState
    from queues.services import transitions

    rows = list(
        Workload.objects.filter(state=WorkloadState.PENDING).values_list("id", "local_queue__cluster_queue_id")[:2000]
    )
    flavors = dict(ResourceFlavor.objects.values_list("name", "id"))
    ids = [pk for pk, _ in rows]
    with transaction.atomic():
        base = timed(lambda: _sql("UPDATE queues_workload SET state = 'Admitted' WHERE id = ANY(%s)", [ids]))[0]
        transaction.set_rollback(True)
    table.add(f"baseline: plain UPDATE of {len(ids):,} pending rows to Admitted", base, base)
    claims = [transitions.Admit(pk, cq, {"cpu": "default", "memory": "default"}) for pk, cq in rows]
    with transaction.atomic():
        seconds, done = timed(
            lambda: transitions.admit_many(claims, now=timezone.now(), started=True, flavor_ids=flavors)
        )
        transaction.set_rollback(True)
    table.add(
        f"admit_many alone: {len(done):,} claimed, intervals and flavors written",
        seconds,
        base,
        f">= {ADMISSIONS_TARGET:,}/s",
        f"{len(done) / seconds:,.0f} admissions/s (rolled back)",
        cpu=_LAST_CPU[0],
    )


def _start_workers(count: int, layout: str) -> list[subprocess.Popen]:
    """``affinity``: the Procfile's control role (``fairportal.control_workers``: one solo worker per
    shard queue); ``random``: ``count`` solo workers on the control queue alone, the layout before
    (each consumes every shard queue, so a unit's pass lands on whichever process is free)."""
    env = {**os.environ, "CONTROL_LOOP_PROCESSES": str(count)}
    options = {"cwd": ROOT, "env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    options["start_new_session"] = True
    if layout == "affinity":
        return [
            subprocess.Popen(
                [sys.executable, "-m", "fairportal.control_workers", "--loglevel=WARNING", "--without-gossip"],
                **options,  # type: ignore[call-overload]
            )
        ]
    celery = [sys.executable, "-m", "celery", "-A", "fairportal", "worker", "--pool=solo", "--queues=celery"]
    return [
        subprocess.Popen(
            [*celery, "--loglevel=WARNING", "-n", f"bench-loop-{index}@%h", "--without-gossip"],
            **options,  # type: ignore[call-overload]
        )
        for index in range(count)
    ]


def _stop_workers(workers: list[subprocess.Popen]) -> None:
    for worker in workers:
        os.killpg(worker.pid, signal.SIGTERM)
    for worker in workers:
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()


def _cpu_seconds(workers: list[subprocess.Popen]) -> float:
    """User and system CPU of the worker processes and their children, from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    pids = [worker.pid for worker in workers]
    for pid in list(pids):
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            continue
        pids += [int(child) for child in children]
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def celery_run(table: Table, counts: tuple[int, ...]) -> None:
    """Rounds of one admission-pass task per unit on N real solo worker processes, per layout.

    For each count and layout, from a fresh copy in the steady state (every reason written once):
    the first round after the workers start (every process cold: what a restart costs), a second
    idle round (nothing fits), then the 10,000 completions and the round that admits into the
    freed room. ``random`` is the layout before (the same-run baseline), ``affinity`` the
    Procfile's. CPU is the workers' own (from /proc), wall time the round's.
    """
    from django.conf import settings

    from fairportal.celery import app
    from queues import tasks
    from queues.admission import load as bridge
    from queues.admission import passes as admission
    from queues.models import Workload, WorkloadState
    from queues.services import cluster, pass_requests

    def one_round(units: list[str], shards: dict[str, int], workers: list[subprocess.Popen]) -> tuple[float, float]:
        cpu = _cpu_seconds(workers)
        started = time.perf_counter()
        sent = [
            tasks.admission_pass.apply_async((unit,), {"shard": shards[unit]}, ignore_result=False) for unit in units
        ]
        for result in sent:
            result.get(timeout=600)
        return time.perf_counter() - started, _cpu_seconds(workers) - cpu

    for count in counts:
        settings.CONTROL_LOOP_PROCESSES = count  # what every sender routes by (ControlRouter)
        rounds: dict[str, tuple[float, float, float, float, float, float, int]] = {}
        for layout in ("random", "affinity"):
            fresh_copy()
            admission.run_all_admission_passes()  # the steady state: every reason written once
            units = bridge.admission_units()
            shards = pass_requests.shards(units)
            keys = [unit.key for unit in units]
            _close_django()
            app.control.purge()
            workers = _start_workers(count, layout)
            try:
                deadline = time.monotonic() + 90
                while len(app.control.ping(timeout=0.5) or []) < count:
                    if time.monotonic() > deadline:
                        raise SystemExit(f"{count} Celery workers did not answer within 90 s")
                cold, cold_cpu = one_round(keys, shards, workers)
                idle, idle_cpu = one_round(keys, shards, workers)
                cluster.complete_due_workloads()
                before = Workload.objects.filter(state=WorkloadState.ADMITTED).count()
                _close_django()
                admit, admit_cpu = one_round(keys, shards, workers)
            finally:
                _stop_workers(workers)
            admitted = Workload.objects.filter(state=WorkloadState.ADMITTED).count() - before
            rounds[layout] = (cold, cold_cpu, idle, idle_cpu, admit, admit_cpu, admitted)
        plural = "es" if count > 1 else ""
        for layout in ("random", "affinity"):
            cold, cold_cpu, idle, idle_cpu, admit, admit_cpu, admitted = rounds[layout]
            baseline = rounds["random"]
            name = "random routing (before)" if layout == "random" else "unit affinity"
            table.add(
                f"Celery, {count} process{plural}, {name}: 8 passes after capacity frees",
                admit,
                baseline[4] if layout == "affinity" else None,
                ">= 2,000/s with 2",
                f"{admitted:,} admitted, {admitted / admit:,.0f} admissions/s",
                cpu=admit_cpu,
            )
            table.add(
                f"  idle round (8 passes, nothing fits), {name}",
                idle,
                baseline[2] if layout == "affinity" else None,
                "",
                "warm" if layout == "affinity" else "a unit's process is random",
                cpu=idle_cpu,
            )
            table.add(
                f"  first round after a (re)start, {name}",
                cold,
                idle if layout == "affinity" else None,
                "",
                "one cold pass per unit" + ("; vs the warm idle round" if layout == "affinity" else ""),
                cpu=cold_cpu,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refill", action="store_true", help="drop and refill the seed database")
    parser.add_argument("--skip-celery", action="store_true", help="leave out the Celery throughput rows")
    parser.add_argument("--workers", default=",".join(map(str, WORKER_COUNTS)), help="worker counts, e.g. 1,2,4")
    args = parser.parse_args()
    import django

    django.setup()
    prepare_seed(args.refill)
    table = Table()
    print(f"\ncontrol loop on {DATABASE_URL} (seed {SEED_DATABASE}), broker {BROKER_URL}\n", flush=True)
    services_run(table)
    if not args.skip_celery:
        celery_run(table, tuple(int(n) for n in args.workers.split(",")))
    print("\n" + table.markdown())


if __name__ == "__main__":
    main()
