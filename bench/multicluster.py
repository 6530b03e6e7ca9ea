"""Side by side on two real Slurm clusters of different versions: each Slurm's own fair share
vs fairportal's one ledger over both.

Run as ``python bench/multicluster.py`` from the repository root (``make bench-multicluster``:
it starts two local Slurms of its own, 22.05 and 24.11, 2 nodes x 16 CPUs each, and names
their directories in ``BENCH_SLURM_DIRS``). The same seeded multi-tenant trace runs twice:

1. **each Slurm alone**: jobs are submitted unheld to their cluster under one Slurm account per
   tenant on each cluster (``fairshare`` = the tenant's weight); each Slurm orders its own jobs by
   its multifactor priority from the usage it has seen, and sees nothing of the other cluster.
2. **fairportal, one ledger**: the same jobs are submitted ``--hold`` to the same clusters naming
   the tenant's LocalQueue; both clusters are ``Cluster`` rows, each with one flavor in ONE
   usage-based ClusterQueue (32 CPUs per flavor), so every tenant has one LocalQueue whose
   decayed usage counts its work on both. An in-process control loop (each cluster's sync and the
   admission pass every second, usage sample every 5 s) imports each job on the cluster it was
   submitted to, admits it to that cluster's flavor and releases it there.

The trace (``build_trace``): team-a (weight 1) runs a burst on cluster 1 alone first; then
team-a, team-b (weight 1) and team-c (weight 2) all submit to both clusters. Under (1) team-a
starts fresh on cluster 2; under (2) its burst moves its order on both.

Both runs are measured from the ``sacct`` of both clusters, the same way: per-tenant share of
the union (64 CPUs) over time, Jain's index per weight (of decayed usage, the quantity both
fair shares equalise, and of CPUs held) averaged over the seconds when every tenant has work,
utilisation of each cluster and of the union, p50/p95 wait. Durations and the half-life are
scaled down together (jobs of 15-35 s, half-life 2 min) so a run takes minutes; Slurm
recomputes its fair-share factors once per ``PriorityCalcPeriod`` (one minute), coarse at this
scale. fairportal's state lives in its own PostgreSQL database (``fp_bench_multicluster``;
``BENCH_DATABASE_URL`` to change it), emptied at the start. Only this bench's jobs (job names
``mcbench-<tenant>``) and accounts (``mc-<tenant>``) are touched. Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # bench/common.py, beside this script
import slurm_fairshare as single  # bench/slurm_fairshare.py: the one-Slurm bench's parts

DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/fp_bench_multicluster")

SEED = 20261128
TENANTS = {"team-a": 1.0, "team-b": 1.0, "team-c": 2.0}
CLUSTERS = ("c1", "c2")  # the trace's two clusters: BENCH_SLURM_DIRS' first (22.05) and second (24.11)
CPUS_PER_CLUSTER = 32
JOB_CPUS = 4
NAMING = single.Naming(account="mc", job="mcbench")
HALF_LIFE_SECONDS = 120.0  # slurm_fairshare.HALF_LIFE, PriorityDecayHalfLife=00:02:00 on both Slurms
BURST = (16, 0.0, 5.0, 20, 30)  # team-a on c1: jobs, first and last submission (s), shortest and longest (s)
COMPETE_AT = (45.0, 55.0)  # then everyone on both clusters, submitted in this window
COMPETE = {"team-a": 16, "team-b": 16, "team-c": 24}  # jobs per tenant per cluster, 15-35 s each


@dataclass(frozen=True)
class Side:
    """One of the bench's Slurm clusters: its directory, version and client tools."""

    label: str  # "c1" or "c2" in the trace
    directory: Path
    version: str
    target: single.Target

    @classmethod
    def of(cls, label: str, directory: Path) -> Side:
        version = "22.05"
        settings = directory / "cluster.env"
        if settings.is_file():
            for line in settings.read_text().splitlines():
                if line.startswith("FAIRPORTAL_SLURM_VERSION="):
                    version = line.split("=", 1)[1].strip()
        wrappers = directory / "bin"  # a chroot version's client wrappers
        bin_dir = str(wrappers) if wrappers.is_dir() else ""
        return cls(label, directory, version, single.Target(bin_dir, str(directory / "etc" / "slurm.conf")))

    @property
    def cluster_name(self) -> str:
        return "slurm-" + self.version.replace(".", "")


# --- the trace ------------------------------------------------------------------------------


def build_trace(seed: int) -> list[single.TraceJob]:
    """team-a's burst on c1 alone, then all three tenants on both clusters (see the module doc)."""
    rng = random.Random(seed)
    count, first, last, shortest, longest = BURST
    jobs = [
        single.TraceJob("team-a", rng.uniform(first, last), rng.randint(shortest, longest), JOB_CPUS, "c1")
        for _ in range(count)
    ]
    for cluster in CLUSTERS:
        for tenant, per_cluster in COMPETE.items():
            jobs.extend(
                single.TraceJob(tenant, rng.uniform(*COMPETE_AT), rng.randint(15, 35), JOB_CPUS, cluster)
                for _ in range(per_cluster)
            )
    return sorted(jobs, key=lambda job: (job.submit_at, job.cluster, job.tenant))


# --- measures (pure: on the sacct times of a run) -------------------------------------------


def decayed_usage(
    result: single.RunResult, steps: Sequence[float], half_life: float, tenants: Mapping[str, float] = TENANTS
) -> list[dict[str, float]]:
    """Each tenant's decayed usage (CPU-seconds, halved every ``half_life`` seconds) at each of
    ``steps`` (one second apart), over every cluster: what one ledger holds. The usage of second
    ``t`` is the CPUs held at ``t``; before the first step it is zero."""
    factor = 0.5 ** (1.0 / half_life)
    usage = dict.fromkeys(tenants, 0.0)
    out = []
    for at in steps:
        held = single.allocation(result, at, tenants)
        usage = {tenant: usage[tenant] * factor + held[tenant] for tenant in tenants}
        out.append(dict(usage))
    return out


def contended_seconds(result: single.RunResult, steps: Sequence[float], tenants: Mapping[str, float]) -> list[int]:
    """Indexes of the steps at which every tenant has work waiting or running."""
    return [index for index, at in enumerate(steps) if len(single.waiting_or_running(result, at)) == len(tenants)]


def union_measures(
    result: single.RunResult,
    tenants: Mapping[str, float] = TENANTS,
    clusters: Sequence[str] = CLUSTERS,
    capacity: int = CPUS_PER_CLUSTER,
    half_life: float = HALF_LIFE_SECONDS,
) -> dict[str, object]:
    """slurm_fairshare's figures over the union (every cluster's capacity), and more:

    - ``jain_usage``: Jain's index of decayed usage per weight over the union, averaged over the
      seconds when every tenant has work (1.0: every tenant's ledger is at its weight's share);
    - ``share_until_drained``: each tenant's share of the union's CPU-seconds from the first
      submission to the last second when every tenant has work (team-a's burst included);
    - ``utilisation_<cluster>``: busy CPU-seconds of one cluster over its capacity x makespan.
    """
    figures = single.measure(result, tenants, capacity * len(clusters))
    steps = single.steps_of(result)
    contended = contended_seconds(result, steps, tenants)
    usage = decayed_usage(result, steps, half_life, tenants)
    jains = [single.jain([usage[index][tenant] / tenants[tenant] for tenant in tenants]) for index in contended]
    figures["jain_usage"] = statistics.fmean(jains) if jains else 1.0
    got = dict.fromkeys(tenants, 0.0)
    for at in steps[: (contended[-1] + 1) if contended else 0]:
        for tenant, cpus in single.allocation(result, at, tenants).items():
            got[tenant] += cpus
    figures["share_until_drained"] = {tenant: got[tenant] / (sum(got.values()) or 1) for tenant in tenants}
    for cluster in clusters:
        busy = sum(sum(single.allocation(result, at, tenants, cluster).values()) for at in steps)
        figures[f"utilisation_{cluster}"] = busy / (capacity * len(steps))
    return figures


# --- the two runs -----------------------------------------------------------------------------


def sides_from_environment() -> tuple[Side, Side]:
    directories = os.environ.get("BENCH_SLURM_DIRS", "").split()
    if len(directories) != 2:
        raise SystemExit("error: BENCH_SLURM_DIRS must name two Slurm directories: run `make bench-multicluster`")
    sides = tuple(Side.of(label, Path(name).resolve()) for label, name in zip(CLUSTERS, directories, strict=True))
    if sides[0].version == sides[1].version:
        raise SystemExit(f"error: the two clusters must be of different versions, both are {sides[0].version}")
    return sides[0], sides[1]


def check_side(side: Side) -> None:
    if "is UP" not in single.slurm("scontrol", "ping", target=side.target):
        raise SystemExit(
            f"error: Slurm {side.version} in {side.directory} does not answer: run `make bench-multicluster`"
        )
    single.check_slurm_half_life(side.target)
    if single.ours_queued(side.target, NAMING, TENANTS):
        raise SystemExit(f"error: Slurm {side.version} still runs jobs of this bench (mcbench-*): wait for them")
    others = single.slurm("squeue", "-h", "-o", "%A", target=side.target).split()
    if others:
        print(f"note: Slurm {side.version} runs {len(others)} other jobs: the figures will be noisier", flush=True)


def cancel_ours(side: Side) -> None:
    """Cancel this bench's jobs left on ``side`` (its job names only: never anyone else's)."""
    names = ",".join(f"{NAMING.job}-{tenant}" for tenant in TENANTS)
    ids = single.slurm("squeue", "-h", "-n", names, "-o", "%A", target=side.target).split()
    if ids:
        single.slurm("scancel", *ids, target=side.target)


def prepare_fairportal(sides: Sequence[Side]) -> None:
    """ONE ClusterQueue with a flavor on each cluster (32 CPUs each), a LocalQueue per tenant."""
    common.one_queue_cluster(
        "union",
        cpus=CPUS_PER_CLUSTER,
        tenants=dict(TENANTS),
        flavors={
            f"cpu-{side.label}": {
                "name": side.cluster_name,
                "backend": "slurm",
                "slurm_bin_dir": side.target.bin_dir,
                "slurm_conf": side.target.conf,
                "flavor_partitions": {f"cpu-{side.label}": "main"},
            }
            for side in sides
        },
    )


class OneLedgerLoop(single.ControlLoop):
    """slurm_fairshare's in-process control loop, which also checks that every admitted job runs
    on the cluster it was submitted to (a job held on one Slurm can only be released there)."""

    def __call__(self) -> None:
        super().__call__()
        from django.db.models import F

        from queues.models import ClusterJob, WorkloadState

        stray = (
            ClusterJob.objects.filter(workload__state=WorkloadState.ADMITTED)
            .exclude(workload__cluster=F("cluster"))
            .values_list("cluster__name", "external_id", "workload__cluster__name")
            .first()
        )
        if stray is not None:
            raise SystemExit(
                f"error: job {stray[1]} held on {stray[0]} was admitted to {stray[2]}'s flavor: this fairportal "
                "does not bind imported jobs to their cluster"
            )


# --- the report ------------------------------------------------------------------------------

ROWS = (
    ("Jain index of decayed usage per weight over the union, while all three have work", "{:.3f}", "jain_usage"),
    ("Jain index of CPUs per weight over the union, tenants with work (average over seconds)", "{:.3f}", "jain"),
    ("utilisation of the union (busy CPU-seconds / 64 CPUs x makespan)", "{:.1%}", "utilisation"),
    ("utilisation of cluster 1 (22.05) / cluster 2 (24.11)", "{:.1%} / {:.1%}", ("utilisation_c1", "utilisation_c2")),
    ("makespan (s)", "{:.0f}", "makespan"),
    ("wait p50 / p95 (s)", "{:.0f} / {:.0f}", ("p50", "p95")),
)


def cell(figures: Mapping[str, object], fmt: str, key: str | tuple[str, ...]) -> str:
    keys = key if isinstance(key, tuple) else (key,)
    return fmt.format(*(figures[name] for name in keys))


def table(per_cluster: Mapping[str, object], one_ledger: Mapping[str, object]) -> list[str]:
    """The bench's table (Markdown), one column per run."""
    lines = ["| measure | each Slurm's own fair share | fairportal, one ledger over both |", "|---|---:|---:|"]
    lines += [f"| {label} | {cell(per_cluster, fmt, key)} | {cell(one_ledger, fmt, key)} |" for label, fmt, key in ROWS]
    total = sum(TENANTS.values())
    shares = [
        ("share of the union's CPU-seconds until a tenant runs out of work", "share_until_drained"),
        ("share of the union's CPU-seconds while all three have work", "contended_share"),
    ]
    for label, key in shares:
        entitled = " / ".join(f"{TENANTS[tenant] / total:.0%}" for tenant in TENANTS)
        lines.append(
            f"| {label}, team-a / team-b / team-c (weights: {entitled}) | "
            + " | ".join(
                " / ".join(f"{figures[key][tenant]:.0%}" for tenant in TENANTS)  # type: ignore[index]
                for figures in (per_cluster, one_ledger)
            )
            + " |"
        )
    lines.append(
        "| wait p50 team-a / team-b / team-c (s) | "
        + " | ".join(
            " / ".join(f"{figures['tenant_p50'][tenant]:.0f}" for tenant in TENANTS)  # type: ignore[index]
            for figures in (per_cluster, one_ledger)
        )
        + " |"
    )
    return lines


def report(per_cluster: single.RunResult, one_ledger: single.RunResult, loop: single.ControlLoop) -> None:
    measures = {run.name: union_measures(run) for run in (per_cluster, one_ledger)}
    single.print_shares(
        "Share of the union's 64 CPUs (2 clusters x 32) per tenant over time (weights team-a 1, team-b 1, team-c 2):",
        measures,
        per_cluster,
        TENANTS,
    )
    print()
    print("\n".join(table(measures[per_cluster.name], measures[one_ledger.name])))
    print(
        f"\nRun time: each Slurm alone {per_cluster.wall_seconds:.0f} s, fairportal {one_ledger.wall_seconds:.0f} s; "
        f"fairportal's loop (both clusters' syncs): {loop.summary()}; load average {os.getloadavg()[0]:.1f} at the end."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=SEED)
    arguments = parser.parse_args()
    sides = sides_from_environment()
    single.configure(DATABASE_URL, backend="simulated")  # the default cluster holds none of the bench's flavors
    common.ensure_database(DATABASE_URL)
    import django

    django.setup()
    trace = build_trace(arguments.seed)
    for side in sides:
        check_side(side)
    print(
        f"trace (seed {arguments.seed}): {len(trace)} jobs of {JOB_CPUS} CPUs, "
        f"{sum(job.seconds * job.cpus for job in trace)} CPU-seconds, on cluster 1 = Slurm {sides[0].version} and "
        f"cluster 2 = Slurm {sides[1].version} ({CPUS_PER_CLUSTER} CPUs each); half-life {single.HALF_LIFE} everywhere",
        flush=True,
    )
    targets = {side.label: side.target for side in sides}
    for side in sides:
        single.prepare_slurm_accounts(TENANTS, target=side.target, naming=NAMING)
    started = time.time()
    loop = OneLedgerLoop()
    try:
        print("run 1: each Slurm's own multifactor fair share ...", flush=True)
        per_cluster = single.run_trace(
            "each Slurm alone", trace, held=False, targets=targets, naming=NAMING, tenants=TENANTS
        )
        for side in sides:
            single.prepare_slurm_accounts(TENANTS, target=side.target, naming=NAMING)
        prepare_fairportal(sides)
        print(f"run 2: fairportal, one ledger over both ({time.time() - started:.0f} s so far) ...", flush=True)
        one_ledger = single.run_trace(
            "fairportal, one ledger", trace, held=True, tick=loop, targets=targets, naming=NAMING, tenants=TENANTS
        )
        for _ in range(3):  # the last endings
            loop()
    except BaseException:  # stopped half-way (an error, Ctrl-C): leave none of our jobs behind
        for side in sides:
            cancel_ours(side)
        raise
    report(per_cluster, one_ledger, loop)


if __name__ == "__main__":
    main()
