"""Side by side on one real Slurm: Slurm's own multifactor fair share vs fairportal driving Slurm.

Run as ``python bench/slurm_fairshare.py`` from the repository root (``make bench-slurm``: it
starts the local Slurm of ``deploy/slurm/local-slurm.sh`` and sets ``SLURM_CONF``). The same
seeded multi-tenant trace runs twice on the same cluster (2 nodes x 16 CPUs):

1. **Slurm alone**: jobs are submitted unheld under one Slurm account per tenant, whose
   ``fairshare`` is the tenant's weight; Slurm orders them by its multifactor priority (fair
   share weight 100000, age 1000, ``PriorityDecayHalfLife`` = the scaled half-life).
2. **fairportal**: the same jobs are submitted ``--hold`` naming the tenant's LocalQueue; an
   in-process control loop (sync + admission pass every second, usage sample every 5 s; half-life
   the same) imports, admits (``UsageBasedAdmissionFairSharing``, namespace weights = the same
   weights, quota = the cluster) and releases them.

Both runs are measured from Slurm's accounting (``sacct`` start and end of every job), the same
way: per-tenant share of the cluster over time, Jain's index of allocation per unit of weight
among tenants with work (time average), utilisation, and p50/p95 wait (start - submit).

Durations and the half-life are scaled down together (jobs of 10-30 s, half-life 2 min instead of
hours and days) so that a run takes minutes. Slurm recomputes fair-share priorities once per
``PriorityCalcPeriod`` (its minimum is one minute), which is coarse at this scale; see docs/benchmarks.md.
fairportal's state lives in its own PostgreSQL database (``fp_bench_slurm``;
``BENCH_DATABASE_URL`` to change it), emptied at the start. Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import common  # noqa: E402 - bench/common.py, beside this script

DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/fp_bench_slurm")
HALF_LIFE = "2m"  # PriorityDecayHalfLife of the harness (FAIRPORTAL_SLURM_HALFLIFE=00:02:00) and usageHalfLifeTime


def configure(database_url: str = DATABASE_URL, backend: str = "slurm") -> None:
    """fairportal's settings for a Slurm bench (before ``django.setup()``; importing this module
    changes nothing, so its pure parts can be tested): its own database, the default cluster's
    backend, the half-life and sampling of the harness, admission passes inline."""
    os.environ["DATABASE_URL"] = database_url
    os.environ["CLUSTER_BACKEND"] = backend
    os.environ["USAGE_HALF_LIFE_TIME"] = HALF_LIFE
    os.environ["USAGE_SAMPLING_INTERVAL"] = "5s"
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "true"  # a submission's admission pass runs inline: no broker needed
    os.environ.setdefault("DEBUG", "false")
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-" + "x" * 50)  # settings require 50 characters
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairportal.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")


SEED = 20261125
CAPACITY_CPUS = 32  # the harness's default: 2 nodes x 16 CPUs
TENANTS = {"team-a": 1, "team-b": 1, "team-c": 2}  # weight: Slurm account fairshare and namespace weight
TICK = 1.0
SAMPLE_EVERY = 5.0
RUN_LIMIT = 30 * 60.0  # seconds one run may take before the bench gives up (bounded wait)


@dataclass(frozen=True)
class TraceJob:
    tenant: str
    submit_at: float  # seconds after the start of the run
    seconds: int
    cpus: int
    cluster: str = ""  # which Slurm it is submitted to (bench/multicluster.py); "": the only one


@dataclass(frozen=True)
class Target:
    """One Slurm cluster's client tools: ``bin_dir`` ('' : ``SLURM_BIN_DIR``, else ``PATH``) and
    ``conf`` ('' : the environment's ``SLURM_CONF``)."""

    bin_dir: str = ""
    conf: str = ""


@dataclass(frozen=True)
class Naming:
    """The Slurm account of each tenant (``{account}-{tenant}``) and the job name of its jobs
    (``{job}-{tenant}``): a bench touches only its own accounts and jobs."""

    account: str = "fp"
    job: str = "bench"


NAMING = Naming()


@dataclass
class RunResult:
    name: str
    jobs: list[tuple[TraceJob, float, float, float]] = field(default_factory=list)  # job, submit, start, end (epoch)
    started: float = 0.0
    wall_seconds: float = 0.0


def build_trace(seed: int) -> list[TraceJob]:
    """team-a floods first, team-b joins at 20 s, team-c (double weight) at 40 s; 10-30 s jobs."""
    rng = random.Random(seed)
    jobs = []
    for tenant, count, first in (("team-a", 30, 0.0), ("team-b", 20, 20.0), ("team-c", 24, 40.0)):
        for _ in range(count):
            jobs.append(TraceJob(tenant, first + rng.uniform(0.0, 10.0), rng.randint(10, 30), 4))
    return sorted(jobs, key=lambda job: job.submit_at)


def slurm(*args: str, target: Target | None = None) -> str:
    """Run a Slurm tool of ``target`` (default: from ``SLURM_BIN_DIR`` when set, as the backend
    does; else ``PATH``; with the environment's ``SLURM_CONF``)."""
    bin_dir = target.bin_dir if target is not None else os.environ.get("SLURM_BIN_DIR", "").strip()
    env = {**os.environ, "SLURM_CONF": target.conf} if target is not None and target.conf else None
    command = [os.path.join(bin_dir, args[0]) if bin_dir else args[0], *args[1:]]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False, env=env)
    if result.returncode != 0:
        raise SystemExit(f"error: {' '.join(args[:3])}: {result.stderr.strip()[:300]}")
    return result.stdout


def account(tenant: str, naming: Naming = NAMING) -> str:
    return f"{naming.account}-{tenant}"


def prepare_slurm_accounts(
    tenants: Mapping[str, float] = TENANTS, *, target: Target | None = None, naming: Naming = NAMING
) -> None:
    """One account per tenant (fairshare = weight), usage reset to zero; root may submit to each."""

    def run(*args: str) -> str:
        return slurm(*args, target=target)

    existing = set(run("sacctmgr", "-n", "-P", "show", "account", "format=account").split())
    for tenant, weight in tenants.items():
        name = account(tenant, naming)
        if name not in existing:
            run("sacctmgr", "-i", "add", "account", name, "cluster=fairportal", f"fairshare={weight}")
            run("sacctmgr", "-i", "add", "user", "root", f"account={name}", "cluster=fairportal")
        run(
            "sacctmgr",
            "-i",
            "modify",
            "account",
            "where",
            f"name={name}",
            "cluster=fairportal",
            "set",
            f"fairshare={weight}",
        )
        run("sacctmgr", "-i", "modify", "account", "where", f"name={name}", "set", "RawUsage=0")
        run("sacctmgr", "-i", "modify", "user", "where", "name=root", f"account={name}", "set", "RawUsage=0")


def check_slurm_half_life(target: Target | None = None) -> None:
    """Both sides must forget at the same rate: Slurm's PriorityDecayHalfLife is the harness's."""
    config = {
        line.split("=", 1)[0].strip(): line.split("=", 1)[1].strip()
        for line in slurm("scontrol", "show", "config", target=target).splitlines()
        if "=" in line
    }
    if config.get("PriorityDecayHalfLife") != "00:02:00" or config.get("PriorityType") != "priority/multifactor":
        raise SystemExit(
            f"error: the bench needs priority/multifactor with PriorityDecayHalfLife=00:02:00 (local-slurm.sh's "
            f"default), got {config.get('PriorityType')} {config.get('PriorityDecayHalfLife')}"
        )


def idle_cluster() -> None:
    ids = slurm("squeue", "-h", "-o", "%A").split()
    if ids:
        raise SystemExit(f"error: the local Slurm runs other jobs ({len(ids)}); run the bench on an idle cluster")


def sbatch(job: TraceJob, *, held: bool, target: Target | None = None, naming: Naming = NAMING) -> str:
    args = [
        "sbatch",
        "--parsable",
        "-o",
        "/dev/null",
        "-e",
        "/dev/null",
        f"--account={account(job.tenant, naming)}",
        f"--cpus-per-task={job.cpus}",
        "--mem=512M",
        "--time=5",
        "-J",
        f"{naming.job}-{job.tenant}",
    ]
    if held:
        args += ["--hold", f"--comment=fairportal:{job.tenant}/main"]
    args.append(f"--wrap=sleep {job.seconds}")
    return slurm(*args, target=target).strip().split(";")[0]


def accounting(job_ids: list[str], target: Target | None = None) -> dict[str, tuple[float, float, float]]:
    """submit, start, end (epoch seconds) of each job, from sacct."""
    document = json.loads(slurm("sacct", "--json", "-X", "-S", "now-2hours", "-j", ",".join(job_ids), target=target))
    return {
        str(job["job_id"]): (job["time"]["submission"], job["time"]["start"], job["time"]["end"])
        for job in document["jobs"]
    }


def ours_queued(target: Target | None, naming: Naming, tenants: Mapping[str, float]) -> bool:
    """Whether any job of this bench (its job names) is still pending or running on ``target``."""
    names = ",".join(f"{naming.job}-{tenant}" for tenant in tenants)
    return bool(slurm("squeue", "-h", "-n", names, "-o", "%A", target=target).split())


def run_trace(
    name: str,
    trace: list[TraceJob],
    *,
    held: bool,
    tick: Callable[[], None] | None = None,
    targets: Mapping[str, Target | None] | None = None,
    naming: Naming = NAMING,
    tenants: Mapping[str, float] = TENANTS,
) -> RunResult:
    """Submit the trace on its schedule (each job to ``targets[job.cluster]``; default: the one
    Slurm of the environment), call ``tick`` every second, wait until every job ended (at most
    ``RUN_LIMIT`` seconds)."""
    where: Mapping[str, Target | None] = targets if targets is not None else {"": None}
    result = RunResult(name=name)
    submitted: list[tuple[TraceJob, str]] = []
    started = time.time()
    pending = list(trace)
    next_tick = started
    while True:
        now = time.time() - started
        if now > RUN_LIMIT:
            raise SystemExit(f"error: run {name!r} did not end within {RUN_LIMIT:.0f} s")
        while pending and pending[0].submit_at <= now:
            job = pending.pop(0)
            submitted.append((job, sbatch(job, held=held, target=where[job.cluster], naming=naming)))
        if tick is not None and time.time() >= next_tick:
            tick()
            next_tick += TICK
        if not pending and not any(ours_queued(target, naming, tenants) for target in where.values()):
            break
        time.sleep(0.2)
    result.wall_seconds = time.time() - started
    result.started = started
    for cluster, target in where.items():
        ids = [job_id for job, job_id in submitted if job.cluster == cluster]
        times = accounting(ids, target) if ids else {}
        for job, job_id in submitted:
            if job.cluster == cluster:
                submit, start, end = times[job_id]
                result.jobs.append((job, submit, start, end))
    return result


# --- fairportal side ---------------------------------------------------------------------------


def ensure_database() -> None:
    common.ensure_database(DATABASE_URL)


def prepare_fairportal() -> None:
    """An empty database with one ClusterQueue the size of the cluster and a LocalQueue per tenant."""
    common.one_queue_cluster("slurm-main", cpus=CAPACITY_CPUS, tenants=TENANTS)


class ControlLoop:
    """The Celery beat schedule's work, in process: sync and passes every tick, samples every 5 s."""

    def __init__(self) -> None:
        self.last_sample = 0.0
        self.pass_seconds: list[float] = []
        self.sync_seconds: list[float] = []

    def __call__(self) -> None:
        from queues.admission import passes as admission
        from queues.services import cluster, usage

        began = time.perf_counter()
        cluster.sync_cluster()
        self.sync_seconds.append(time.perf_counter() - began)
        if time.time() - self.last_sample >= SAMPLE_EVERY:
            usage.sample_usage()
            self.last_sample = time.time()
        began = time.perf_counter()
        admission.run_all_admission_passes()
        self.pass_seconds.append(time.perf_counter() - began)

    def summary(self) -> str:
        return (
            f"sync p50 {1000 * statistics.median(self.sync_seconds):.0f} ms, "
            f"admission passes p50 {1000 * statistics.median(self.pass_seconds):.0f} ms per tick"
        )


# --- measures ---------------------------------------------------------------------------------


def allocation(
    result: RunResult, at: float, tenants: Mapping[str, float] = TENANTS, cluster: str | None = None
) -> dict[str, int]:
    """CPUs each tenant runs at ``at`` (on ``cluster`` only, unless None)."""
    cpus = dict.fromkeys(tenants, 0)
    for job, _, start, end in result.jobs:
        if start <= at < end and (cluster is None or job.cluster == cluster):
            cpus[job.tenant] += job.cpus
    return cpus


def waiting_or_running(result: RunResult, at: float) -> set[str]:
    return {job.tenant for job, submit, _, end in result.jobs if submit <= at < end}


def jain(values: list[float]) -> float:
    if not values or not any(values):
        return 1.0
    return sum(values) ** 2 / (len(values) * sum(value * value for value in values))


def steps_of(result: RunResult) -> list[float]:
    """Every whole second from the first submission to the last end (epoch seconds)."""
    first = min(submit for _, submit, _, _ in result.jobs)
    last = max(end for _, _, _, end in result.jobs)
    return [first + offset for offset in range(int(last - first) + 1)]


def measure(
    result: RunResult, tenants: Mapping[str, float] = TENANTS, capacity: int = CAPACITY_CPUS
) -> dict[str, object]:
    """The figures of one run, all tenants' jobs on ``capacity`` CPUs, sampled every second."""
    steps = steps_of(result)
    first, last = steps[0], max(end for _, _, _, end in result.jobs)
    busy, jains, series = 0, [], []
    for at in steps:
        cpus = allocation(result, at, tenants)
        busy += sum(cpus.values())
        active = sorted(waiting_or_running(result, at))
        if len(active) > 1:
            jains.append(jain([cpus[tenant] / tenants[tenant] for tenant in active]))
        series.append((at - first, {tenant: cpus[tenant] / capacity for tenant in tenants}))
    # While every tenant has work waiting or running: CPU-seconds each one got, per unit of weight.
    contended = [at for at in steps if len(waiting_or_running(result, at)) == len(tenants)]
    got = dict.fromkeys(tenants, 0.0)
    for at in contended:
        for tenant, cpus in allocation(result, at, tenants).items():
            got[tenant] += cpus
    contended_share = {tenant: got[tenant] / (sum(got.values()) or 1) for tenant in tenants}
    waits = sorted(start - submit for _, submit, start, _ in result.jobs)
    per_tenant_wait = {
        tenant: statistics.median(start - submit for job, submit, start, _ in result.jobs if job.tenant == tenant)
        for tenant in tenants
    }
    return {
        "makespan": last - first,
        "utilisation": busy / (capacity * len(steps)),
        "jain": statistics.fmean(jains) if jains else 1.0,
        "jain_contended": jain([got[tenant] / tenants[tenant] for tenant in tenants]),
        "contended_seconds": len(contended),
        "contended_share": contended_share,
        "p50": percentile(waits, 50),
        "p95": percentile(waits, 95),
        "tenant_p50": per_tenant_wait,
        "series": series,
    }


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    rank = max(0, min(len(values) - 1, round(pct / 100 * len(values) + 0.5) - 1))
    return sorted(values)[rank]


def entitled(active: set[str], tenants: Mapping[str, float] = TENANTS) -> dict[str, float]:
    total = sum(tenants[tenant] for tenant in active) or 1
    return {tenant: (tenants[tenant] / total if tenant in active else 0.0) for tenant in tenants}


def print_shares(
    title: str,
    measures: Mapping[str, Mapping[str, object]],
    reference: RunResult,
    tenants: Mapping[str, float] = TENANTS,
) -> None:
    """Each run's per-tenant share every 15 s (``measures[run]["series"]``) and what the tenants
    with work in ``reference`` are entitled to by weight."""
    print(f"\n{title}\n")
    print("  t(s) | " + " | ".join(f"{name:^23}" for name in measures) + " | entitled (all waiting)")
    letters = "".join(f"{tenant[-1]:^6}" for tenant in tenants)
    print("       | " + " | ".join(letters.center(23) for _ in measures) + " |")
    length = max(len(m["series"]) for m in measures.values())  # type: ignore[arg-type]
    for offset in range(0, length, 15):
        cells = []
        for m in measures.values():
            series = m["series"]  # type: ignore[assignment]
            if offset < len(series):
                shares = series[offset][1]
                cells.append("  ".join(f"{shares[t]:4.0%}" for t in tenants).center(23))
            else:
                cells.append("(done)".center(23))
        active = waiting_or_running(reference, min(s for _, s, _, _ in reference.jobs) + offset)
        want = entitled(active, tenants)
        print(f"{offset:6d} | " + " | ".join(cells) + " | " + "  ".join(f"{want[t]:4.0%}" for t in tenants))


def report(slurm_run: RunResult, portal_run: RunResult, loop: ControlLoop) -> None:
    measures = {run.name: measure(run) for run in (slurm_run, portal_run)}
    print_shares(
        "Share of the cluster's 32 CPUs per tenant over time (weights team-a 1, team-b 1, team-c 2):",
        measures,
        slurm_run,
    )
    print("\n| measure | Slurm multifactor fair share | fairportal driving Slurm |")
    print("|---|---:|---:|")
    a, b = measures[slurm_run.name], measures[portal_run.name]
    rows = [
        ("Jain index of CPUs per weight, tenants with work (average over seconds)", "{:.3f}", "jain"),
        ("Jain index of CPU-seconds per weight while all three have work", "{:.3f}", "jain_contended"),
        ("utilisation (busy CPU-seconds / capacity x makespan)", "{:.1%}", "utilisation"),
        ("makespan (s)", "{:.0f}", "makespan"),
        ("wait p50 (s)", "{:.1f}", "p50"),
        ("wait p95 (s)", "{:.1f}", "p95"),
    ]
    for label, fmt, key in rows:
        print(f"| {label} | {fmt.format(a[key])} | {fmt.format(b[key])} |")
    for tenant in TENANTS:
        entitled_share = TENANTS[tenant] / sum(TENANTS.values())
        print(
            f"| share of CPU-seconds while all have work, {tenant} (entitled {entitled_share:.0%}) | "
            f"{a['contended_share'][tenant]:.1%} | {b['contended_share'][tenant]:.1%} |"
        )  # type: ignore[index]
    for tenant in TENANTS:
        print(
            f"| wait p50 {tenant} (weight {TENANTS[tenant]}) (s) | {a['tenant_p50'][tenant]:.1f} | {b['tenant_p50'][tenant]:.1f} |"
        )  # type: ignore[index]
    print(
        f"\nRun time: Slurm alone {slurm_run.wall_seconds:.0f} s, fairportal {portal_run.wall_seconds:.0f} s; "
        f"fairportal's loop: {loop.summary()}."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=SEED)
    arguments = parser.parse_args()
    if not os.environ.get("SLURM_CONF"):
        raise SystemExit("error: SLURM_CONF is not set: run `make bench-slurm` (it starts the local Slurm)")
    configure()
    ensure_database()
    import django

    django.setup()
    trace = build_trace(arguments.seed)
    idle_cluster()
    check_slurm_half_life()
    print(
        f"trace (seed {arguments.seed}): {len(trace)} jobs of 4 CPUs, {sum(j.seconds * j.cpus for j in trace)} CPU-seconds, "
        f"on {CAPACITY_CPUS} CPUs; half-life {HALF_LIFE} on both sides"
    )
    prepare_slurm_accounts()
    print("run 1: Slurm's multifactor fair share ...", flush=True)
    slurm_run = run_trace("Slurm", trace, held=False)
    prepare_slurm_accounts()
    prepare_fairportal()
    loop = ControlLoop()
    print("run 2: fairportal driving Slurm ...", flush=True)
    portal_run = run_trace("fairportal", trace, held=True, tick=loop)
    for _ in range(3):  # the last endings
        loop()
    report(slurm_run, portal_run, loop)


if __name__ == "__main__":
    main()
