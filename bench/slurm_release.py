"""Import and release throughput on a real Slurm, each against a baseline measured in the same run.

Run as ``python bench/slurm_release.py [--jobs 400] [--profile FILE]`` from the repository root
(``make bench-slurm-release``). The Slurm is the one ``SLURM_CONF`` names, its tools taken from
``SLURM_BIN_DIR`` when set (wrapper scripts of a chroot cluster), else from ``PATH``.

1. **import**: ``--jobs`` held jobs naming ``bench/main``.
   - baseline: one ``squeue --json`` and a plain bulk INSERT of the same rows (workloads, their
     resource rows, their job links) with no validation, no checks: the floor;
   - fairportal: one cluster sync (``squeue --json``, the submission path's checks and
     validation, bulk INSERTs, the pass request).
2. **admit+release**: ``--jobs`` more held jobs.
   - baseline: one ``scontrol release <id>`` per job (a backend handling jobs one at a time);
   - fairportal: one admission pass admitting the imported workloads (quota for all of them),
     then the release after its commit (batched ``scontrol``), end to end.

Prints seconds, jobs per second and the ratio of each pair. fairportal's state lives in its own
PostgreSQL database (``BENCH_DATABASE_URL``, default ``fp_bench_slurm``), emptied first.
``--profile FILE`` writes a cProfile of the sync and the pass to ``FILE.sync``/``FILE.pass``.
Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import common
from slurm_fairshare import configure, ensure_database, idle_cluster, slurm

configure()  # fairportal's settings of the Slurm benches, before Django is set up

JOB_NAME = "bench-release"


def submit_held(count: int, comment: str | None, name: str = JOB_NAME) -> list[str]:
    ids = []
    for _ in range(count):
        args = [
            "sbatch",
            "--parsable",
            "--hold",
            "-o",
            "/dev/null",
            "-e",
            "/dev/null",
            "--cpus-per-task=1",
            "--mem=64M",
            "--time=2",
            "-J",
            name,
        ]
        if comment:
            args.append(f"--comment={comment}")
        args.append("--wrap=sleep 1")
        ids.append(slurm(*args).strip().split(";")[0])
    return ids


def wait_until_drained(name: str | None = None, timeout: float = 600.0) -> None:
    """Until no job (named ``name``) is pending, running or completing."""
    deadline = time.monotonic() + timeout
    while slurm("squeue", "-h", "-o", "%A", *(["-n", name] if name else [])).split():
        if time.monotonic() > deadline:
            raise SystemExit("error: jobs still queued after 10 minutes")
        time.sleep(1)


def timed(step: Callable[[], Any], profile: str | None) -> tuple[Any, float]:
    profiler = cProfile.Profile() if profile else None
    began = time.perf_counter()
    if profiler:
        profiler.enable()
    value = step()
    if profiler:
        profiler.disable()
    seconds = time.perf_counter() - began
    if profiler and profile:
        profiler.dump_stats(profile)
    return value, seconds


def plain_insert(job_ids: set[str]) -> int:
    """The floor: one ``squeue --json`` and the rows a sync writes, bulk INSERTed unchecked."""
    from django.db import transaction
    from django.utils import timezone

    from queues.backends.slurm import jobs as slurm_jobs
    from queues.models import ClusterJob, LocalQueue, Workload, WorkloadResource

    queue = LocalQueue.objects.select_related("namespace").get(namespace__name="bench", name="main")
    records = [
        slurm_jobs.normalise_queue_job(job)  # as the sync reads each record (23.02+ print number objects)
        for job in json.loads(slurm("squeue", "--json"))["jobs"]
        if str(job["job_id"]) in job_ids
    ]
    resources = {"cpu": "cpu", "mem": "memory"}
    now = timezone.now()
    with transaction.atomic():
        workloads = Workload.objects.bulk_create(
            Workload(
                namespace=queue.namespace,
                local_queue=queue,
                name=f"plain-{job['job_id']}",
                pod_sets=[{"name": "main", "count": 1, "requests": slurm_jobs.requests_of(job, resources)}],
                max_runtime_seconds=slurm_jobs.max_runtime_seconds(job),
                created_at=now,
                queued_at=slurm_jobs.submitted_at(job) or now,
            )
            for job in records
        )
        WorkloadResource.objects.bulk_create(
            WorkloadResource(workload=w, resource=r, amount=a) for w in workloads for r, a in w.requests.items()
        )
        ClusterJob.objects.bulk_create(
            ClusterJob(backend="plain", external_id=str(job["job_id"]), workload=w)
            for job, w in zip(records, workloads)
        )
    return len(workloads)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=400)
    parser.add_argument(
        "--profile", default="", help="write cProfile stats of the sync and the pass (FILE.sync, FILE.pass)"
    )
    arguments = parser.parse_args()
    count = arguments.jobs
    if not 1 <= count <= 5000:
        raise SystemExit("error: --jobs must be between 1 and 5000")
    if not os.environ.get("SLURM_CONF"):
        raise SystemExit("error: SLURM_CONF is not set: run `make bench-slurm-release` (it starts the local Slurm)")
    ensure_database()
    import django

    django.setup()
    from queues.admission import passes as admission
    from queues.backends.slurm.transport import calls
    from queues.models import ClusterJob, Workload, WorkloadState
    from queues.services import cluster, pass_requests

    # The sync asks for an admission pass after its commit (a Celery task; inline in this eager
    # process): time the sync and the pass apart by running the pass explicitly below.
    pass_requests.request_admission_pass = lambda cluster_queue_id: None
    dispatch_seconds: list[float] = []
    dispatch = cluster.dispatch_decisions

    def timed_dispatch(admitted: list[int], evicted: list[int], **clusters: Any) -> None:
        began = time.perf_counter()
        dispatch(admitted, evicted, **clusters)
        dispatch_seconds.append(time.perf_counter() - began)

    cluster.dispatch_decisions = timed_dispatch  # the pass looks it up at commit time
    idle_cluster()
    common.one_queue_cluster("release", cpus=count, tenants={"bench": 1})
    version = slurm("sinfo", "--version").strip()

    # A worker is a long-lived process: warm it up (Django's query compilation caches, the first
    # connection) with one job imported, then forgotten, before anything is measured.
    (warm,) = submit_held(1, "fairportal:bench/main", "bench-warm-up")
    cluster.sync_cluster()
    Workload.objects.filter(cluster_job__external_id=warm).delete()
    ClusterJob.objects.filter(external_id=warm).delete()
    slurm("scancel", warm)
    wait_until_drained("bench-warm-up")

    print(f"{version}: {count} held jobs naming bench/main ...", flush=True)
    ids = submit_held(count, "fairportal:bench/main")
    inserted, plain_seconds = timed(lambda: plain_insert(set(ids)), None)
    assert inserted == count, f"plain insert wrote {inserted} of {count}"
    ClusterJob.objects.filter(backend="plain").delete()
    Workload.objects.filter(name__startswith="plain-").delete()

    calls_before = calls.total
    report, sync_seconds = timed(cluster.sync_cluster, f"{arguments.profile}.sync" if arguments.profile else None)
    import_calls = calls.total - calls_before
    assert len(report.imported) == count, f"the sync imported {len(report.imported)} of {count}: {report}"

    print(f"baseline: {count} more held jobs, one scontrol release per job ...", flush=True)
    others = submit_held(count, None, "bench-baseline")
    began = time.perf_counter()
    for job_id in others:
        slurm("scontrol", "release", job_id)
    baseline = time.perf_counter() - began
    wait_until_drained("bench-baseline")  # the pass below does not compete with these jobs' runs

    print(f"fairportal: admission pass admitting the {count} imported workloads, batched release ...", flush=True)
    calls_before = calls.total
    results, pass_seconds = timed(
        admission.run_all_admission_passes, f"{arguments.profile}.pass" if arguments.profile else None
    )
    release_calls = calls.total - calls_before
    admitted = Workload.objects.filter(state=WorkloadState.ADMITTED).count()
    assert admitted == count, f"{admitted} of {count} admitted"
    wait_until_drained()

    released = sum(dispatch_seconds)
    print()
    print(f"{version}, {count} jobs")
    print()
    print("| step | seconds | jobs/s | vs baseline |")
    print("|---|---:|---:|---:|")
    print(
        f"| import baseline: `squeue --json` + plain bulk INSERT (no checks) | {plain_seconds:.2f} "
        f"| {count / plain_seconds:.0f} | 1.0x |"
    )
    print(
        f"| import fairportal: one sync ({import_calls} Slurm call(s)) | {sync_seconds:.2f} "
        f"| {count / sync_seconds:.0f} | {plain_seconds / sync_seconds:.2f}x |"
    )
    print(f"| release baseline: {count} x `scontrol release <id>` | {baseline:.2f} | {count / baseline:.0f} | 1.0x |")
    print(
        f"| admit+release fairportal: one pass, release after its commit ({release_calls} Slurm call(s)) "
        f"| {pass_seconds:.2f} | {count / pass_seconds:.0f} | {baseline / pass_seconds:.2f}x |"
    )
    print(
        f"| of which the release after the commit | {released:.3f} | {count / released:.0f} "
        f"| {baseline / released:.1f}x |"
    )
    print(f"\n{len(results)} pass(es), {admitted} admitted.")


if __name__ == "__main__":
    sys.exit(main())
