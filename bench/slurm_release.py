"""Release throughput on a real Slurm: one batched ``scontrol`` per pass vs one call per job.

Run as ``python bench/slurm_release.py [--jobs 400]`` from the repository root (``make
bench-slurm-release``; the local Slurm of ``deploy/slurm/local-slurm.sh``, ``SLURM_CONF`` set).
``--jobs`` held jobs (1 CPU, ``sleep 1``) are submitted twice:

1. **baseline**: released with one ``scontrol release <id>`` per job (what a backend that
   handles workloads one at a time would do), measured in this run;
2. **fairportal**: imported by one sync, admitted by one admission pass (quota for all of them)
   and released by the pass's dispatch after its commit: one ``scontrol release`` for all of
   them (no partition to move them to, none requeued before).

It prints the time of each step, jobs per second and the ratio. fairportal's state lives in
its own PostgreSQL database (``fp_bench_slurm``; ``BENCH_DATABASE_URL``), emptied first.
Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import common
from slurm_fairshare import DATABASE_URL, ensure_database, idle_cluster, slurm  # sets the environment first

assert DATABASE_URL


def submit_held(count: int, comment: str | None) -> list[str]:
    ids = []
    for _ in range(count):
        args = ["sbatch", "--parsable", "--hold", "-o", "/dev/null", "-e", "/dev/null", "--cpus-per-task=1",
                "--mem=64M", "--time=2", "-J", "bench-release"]
        if comment:
            args.append(f"--comment={comment}")
        args.append("--wrap=sleep 1")
        ids.append(slurm(*args).strip().split(";")[0])
    return ids


def wait_until_drained(timeout: float = 600.0) -> None:
    deadline = time.monotonic() + timeout
    while slurm("squeue", "-h", "-o", "%A").split():
        if time.monotonic() > deadline:
            raise SystemExit("error: jobs still queued after 10 minutes")
        time.sleep(1)


def prepare(count: int) -> None:
    common.one_queue_cluster("release", cpus=count, tenants={"bench": 1})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=400)
    count = parser.parse_args().jobs
    if not os.environ.get("SLURM_CONF"):
        raise SystemExit("error: SLURM_CONF is not set: run `make bench-slurm-release` (it starts the local Slurm)")
    ensure_database()
    import django

    django.setup()
    from queues.admission import passes as admission
    from queues.backends.slurm.client import SlurmClient
    from queues.models import Workload, WorkloadState
    from queues.services import cluster, pass_requests

    # The sync asks for an admission pass after its commit (a Celery task; inline in this eager
    # process): time the sync and the pass apart by running the pass explicitly below.
    pass_requests.request_admission_pass = lambda cluster_queue_id: None
    dispatch_seconds: list[float] = []
    dispatch = cluster.dispatch_decisions

    def timed_dispatch(admitted: list[int], evicted: list[int]) -> None:
        began = time.perf_counter()
        dispatch(admitted, evicted)
        dispatch_seconds.append(time.perf_counter() - began)

    cluster.dispatch_decisions = timed_dispatch  # the pass looks it up at commit time
    idle_cluster()
    prepare(count)

    print(f"baseline: {count} held jobs, one scontrol release per job ...", flush=True)
    ids = submit_held(count, None)
    began = time.perf_counter()
    for job_id in ids:
        slurm("scontrol", "release", job_id)
    baseline = time.perf_counter() - began
    wait_until_drained()

    print(f"fairportal: {count} held jobs naming bench/main: sync, pass, batched release ...", flush=True)
    submit_held(count, "fairportal:bench/main")
    calls_before = SlurmClient.calls_total
    began = time.perf_counter()
    imported = cluster.sync_cluster()
    sync_seconds = time.perf_counter() - began
    began = time.perf_counter()
    (result,) = admission.run_all_admission_passes()  # the dispatch runs after the pass commits
    pass_seconds = time.perf_counter() - began
    admitted = Workload.objects.filter(state=WorkloadState.ADMITTED).count()
    commands = SlurmClient.calls_total - calls_before
    wait_until_drained()

    print()
    print("| step | seconds | jobs/s | vs baseline |")
    print("|---|---:|---:|---:|")
    print(f"| baseline: {count} x `scontrol release <id>` | {baseline:.2f} | {count / baseline:.0f} | 1.0x |")
    print(f"| fairportal: sync importing {len(imported.imported)} held jobs (squeue --json, {count} workloads) "
          f"| {sync_seconds:.2f} | {count / sync_seconds:.0f} | |")
    released = sum(dispatch_seconds)
    print(f"| fairportal: admission pass admitting {len(result.admitted)}, release after its commit included "
          f"| {pass_seconds:.2f} | {count / pass_seconds:.0f} | {baseline / pass_seconds:.2f}x |")
    print(f"| of which the release after the commit: one `scontrol release` for all {count} "
          f"| {released:.3f} | {count / released:.0f} | {baseline / released:.1f}x |")
    print(f"\n{admitted} admitted; Slurm commands for the import and the release together: {commands} "
          f"(baseline: {count}).")


if __name__ == "__main__":
    sys.exit(main())
