"""bench/multicluster.py's pure parts on hand-computed inputs, and its documented command.

The bench itself drives two real Slurms for minutes (``make bench-multicluster``, not part of
``make test``); what it computes from their ``sacct`` times is checked here on small runs whose
figures are worked out by hand in the comments.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    """bench/multicluster.py, imported the way it runs (its directory on the path, to import
    bench/common.py and bench/slurm_fairshare.py by name); the path and the bench's top-level
    names are put back afterwards, so nothing else in the suite sees them."""
    path, modules = list(sys.path), set(sys.modules)
    try:
        spec = importlib.util.spec_from_file_location("bench_multicluster", BENCH / "multicluster.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up while it runs
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path
        for name in set(sys.modules) - modules:
            if name in ("bench_multicluster", "common", "slurm_fairshare"):
                del sys.modules[name]
    return module


def run_of(bench: ModuleType, jobs: list[tuple[str, str, float, float, float]]):
    """A RunResult from (tenant, cluster, submit, start, end) rows of 4-CPU jobs."""
    single = bench.single
    result = single.RunResult(name="hand")
    for tenant, cluster, submit, start, end in jobs:
        result.jobs.append((single.TraceJob(tenant, submit, int(end - start), 4, cluster), submit, start, end))
    return result


def test_given_the_seed_then_team_a_bursts_on_cluster_1_alone_before_all_three_compete_on_both(bench):
    trace = bench.build_trace(bench.SEED)

    assert trace == bench.build_trace(bench.SEED)  # seeded: the same trace every run
    assert trace != bench.build_trace(bench.SEED + 1)
    assert [job.submit_at for job in trace] == sorted(job.submit_at for job in trace)
    burst = [job for job in trace if job.submit_at < 45]
    assert len(burst) == 16 and {(job.tenant, job.cluster) for job in burst} == {("team-a", "c1")}
    assert all(0 <= job.submit_at <= 5 and 20 <= job.seconds <= 30 for job in burst)
    later = [job for job in trace if job.submit_at >= 45]
    assert Counter((job.tenant, job.cluster) for job in later) == {
        ("team-a", "c1"): 16, ("team-a", "c2"): 16,
        ("team-b", "c1"): 16, ("team-b", "c2"): 16,
        ("team-c", "c1"): 24, ("team-c", "c2"): 24,
    }  # fmt: skip
    assert all(45 <= job.submit_at <= 55 and 15 <= job.seconds <= 35 and job.cpus == 4 for job in later)


def test_given_two_jobs_then_decayed_usage_halves_every_half_life_and_adds_the_cpus_held(bench):
    # team-a holds 4 CPUs in [0, 2) on c1, team-b 4 CPUs in [1, 3) on c2; half-life 1 s.
    run = run_of(bench, [("team-a", "c1", 0, 0, 2), ("team-b", "c2", 0, 1, 3)])
    steps = bench.single.steps_of(run)
    assert steps == [0, 1, 2, 3]

    usage = bench.decayed_usage(run, steps, 1.0, {"team-a": 1, "team-b": 1})

    # t0: a 4; t1: a 4/2 + 4 = 6, b 4; t2: a 3, b 2 + 4 = 6; t3: a 1.5, b 3 (both ended)
    assert usage == [
        {"team-a": 4, "team-b": 0},
        {"team-a": 6, "team-b": 4},
        {"team-a": 3, "team-b": 6},
        {"team-a": 1.5, "team-b": 3},
    ]


def test_given_a_hand_run_then_union_figures_are_the_hand_computed_ones(bench):
    # As above; both tenants have work (submitted, not ended) at t0 and t1, team-a alone at t2.
    run = run_of(bench, [("team-a", "c1", 0, 0, 2), ("team-b", "c2", 0, 1, 3)])

    figures = bench.union_measures(
        run, tenants={"team-a": 1, "team-b": 1}, clusters=("c1", "c2"), capacity=4, half_life=1.0
    )

    # Jain of usage per weight: t0 (4, 0) -> 16 / (2 x 16) = 0.5; t1 (6, 4) -> 100 / (2 x 52); mean.
    assert figures["jain_usage"] == pytest.approx((0.5 + 100 / 104) / 2)
    # CPU-seconds up to t1, the last second both have work: team-a 4 + 4, team-b 0 + 4.
    assert figures["share_until_drained"] == pytest.approx({"team-a": 2 / 3, "team-b": 1 / 3})
    # each cluster: 8 busy CPU-seconds over 4 CPUs x 4 steps; the union: 16 over 8 x 4
    assert figures["utilisation_c1"] == pytest.approx(0.5)
    assert figures["utilisation_c2"] == pytest.approx(0.5)
    assert figures["utilisation"] == pytest.approx(0.5)
    # CPUs per weight among tenants with work: t0 (4, 0) -> 0.5, t1 (4, 4) -> 1; t2, t3: one tenant
    assert figures["jain"] == pytest.approx(0.75)
    assert figures["tenant_p50"] == {"team-a": 0, "team-b": 1}


def test_given_weights_then_jain_per_weight_is_one_only_at_the_weighted_split(bench):
    run = run_of(bench, [("team-a", "c1", 0, 0, 1), ("team-c", "c2", 0, 0, 1), ("team-c", "c1", 0, 0, 1)])

    figures = bench.union_measures(run, tenants={"team-a": 1, "team-c": 2}, clusters=("c1", "c2"), capacity=8)

    # team-a 4 CPUs, team-c 8 with weight 2: 4 per weight each, a fair split
    assert figures["jain"] == pytest.approx(1.0)
    assert figures["utilisation_c1"] == pytest.approx(8 / (8 * 2))  # 8 CPUs busy at t0, none at t1
    assert bench.single.jain([4.0, 0.0]) == pytest.approx(0.5)


def test_given_figures_then_the_table_has_a_row_per_measure_and_the_weights(bench):
    shares = {"team-a": 0.25, "team-b": 0.25, "team-c": 0.5}
    figures = {
        "jain_usage": 0.9, "jain": 0.8, "utilisation": 0.75, "utilisation_c1": 0.7, "utilisation_c2": 0.8,
        "makespan": 200.0, "p50": 10.0, "p95": 50.0, "share_until_drained": shares, "contended_share": shares,
        "tenant_p50": {"team-a": 1.0, "team-b": 2.0, "team-c": 3.0},
    }  # fmt: skip

    lines = bench.table(figures, figures)

    assert lines[2] == (
        "| Jain index of decayed usage per weight over the union, while all three have work | 0.900 | 0.900 |"
    )
    assert "| utilisation of cluster 1 (22.05) / cluster 2 (24.11) | 70.0% / 80.0% | 70.0% / 80.0% |" in lines
    assert any(line.startswith("| share of the union's CPU-seconds while all three") and "25% / 25% / 50%" in line
               for line in lines)  # fmt: skip
    assert len(lines) == 2 + len(bench.ROWS) + 3


def test_the_documented_command_exists_and_runs_the_bench_on_two_slurms():
    make = subprocess.run(
        ["make", "-n", "bench-multicluster"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )

    assert make.returncode == 0, make.stderr
    assert "bench/multicluster.py" in make.stdout
    assert "FAIRPORTAL_SLURM_VERSION=$v" in make.stdout and "for v in 22.05 24.11" in make.stdout
    for doc in ("README.md", "docs/benchmarks.md"):
        assert "make bench-multicluster" in (ROOT / doc).read_text(), doc
