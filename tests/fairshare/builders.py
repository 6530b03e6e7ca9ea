"""Builders shared by the engine tests: small snapshots in a few lines, and scenario runs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from fairshare.policy import FairSharingPolicy
from fairshare.simulation.scenario import load_scenario
from fairshare.simulation.simulator import simulate
from fairshare.types import (
    ClusterQueue,
    Cohort,
    FlavorQuotas,
    Hold,
    LocalQueue,
    Namespace,
    Preemption,
    ResourceQuota,
    Snapshot,
    UsageState,
    Workload,
    node_id,
)

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
CPU = 1000  # millis of one core
GIB = 2**30 * 1000  # millis of one GiB


def quotas(flavor: str = "default", **resources: Any) -> tuple[FlavorQuotas, ...]:
    """``quotas(cpu=4)`` or ``quotas(cpu=(4, borrowing, lending))`` in whole units."""
    result = {}
    for resource, value in resources.items():
        resource = resource.replace("__", "/").replace("_", ".")
        nominal, borrowing, lending = value if isinstance(value, tuple) else (value, None, None)
        result[resource] = ResourceQuota(
            nominal * 1000,
            None if borrowing is None else borrowing * 1000,
            None if lending is None else lending * 1000,
        )
    return (FlavorQuotas(flavor, result),)


def cq(
    name: str,
    cpu: Any = 4,
    *,
    cohort: str | None = None,
    mode: str | None = None,
    strategy: str = "BestEffortFIFO",
    weight: float = 1.0,
    within: str = "Never",
    reclaim: str = "Never",
    stop: str = "None",
    flavors: tuple[FlavorQuotas, ...] | None = None,
) -> ClusterQueue:
    return ClusterQueue(
        name,
        cohort,
        weight,
        strategy,
        mode,
        flavors if flavors is not None else quotas(cpu=cpu),
        Preemption(within, reclaim),
        stop,
    )


def lq(key: str, cluster_queue: str, weight: float = 1.0, stop: str = "None") -> LocalQueue:
    return LocalQueue(key, key.split("/")[0], cluster_queue, weight, stop)


def wl(
    key: str,
    local_queue: str,
    cpu: float = 1,
    *,
    priority: int = 0,
    t: float = 0.0,
    admitted: bool = False,
    cluster_queue: str | None = None,
    admitted_at: float | None = None,
    flavor: str = "default",
    **other: float,
) -> Workload:
    requests = {"cpu": int(cpu * CPU)} if cpu else {}
    for resource, amount in other.items():
        requests[resource.replace("__", "/").replace("_", ".")] = int(amount * 1000)
    assignment = dict.fromkeys(requests, flavor) if admitted else {}
    return Workload(
        key,
        local_queue,
        requests,
        priority,
        t,
        (),
        admitted,
        (admitted_at if admitted_at is not None else t) if admitted else None,
        cluster_queue if admitted else None,
        assignment,
    )


def usage(**by_queue: float) -> dict[str, UsageState]:
    """``usage(**{"a/main": 2})``: LocalQueue consumed CPU in cores."""
    return {
        node_id("localQueue", key): UsageState({"cpu": cores * CPU}, last_update=0.0) for key, cores in by_queue.items()
    }


def snapshot(
    cluster_queues: list[ClusterQueue],
    local_queues: list[LocalQueue],
    workloads: list[Workload],
    *,
    cohorts: list[Cohort] = (),
    namespaces: list[Namespace] = (),
    usage: dict | None = None,
    holds: list[Hold] = (),
    policy: FairSharingPolicy | None = None,
    flavors: tuple[str, ...] = ("default",),
    historical: dict | None = None,
) -> Snapshot:
    return Snapshot(
        policy=policy or FairSharingPolicy(),
        flavors=flavors,
        cohorts=tuple(cohorts),
        cluster_queues=tuple(cluster_queues),
        namespaces=tuple(namespaces),
        local_queues=tuple(local_queues),
        workloads=tuple(workloads),
        usage=usage or {},
        holds=tuple(holds),
        historical_usage=historical or {},
    )


def admitted(plan_result) -> list[str]:
    return [a.workload for a in plan_result.admissions]


def reasons(plan_result) -> dict[str, Any]:
    return {p.workload: p for p in plan_result.pending}


def run_scenario(name: str, *sets: str) -> dict[str, Any]:
    return simulate(load_scenario(SCENARIOS / name, list(sets)))


def admitted_per_queue(result: dict[str, Any]) -> dict[str, int]:
    """Workloads in state Admitted at the end, per LocalQueue."""
    counts = Counter(w["localQueue"] for w in result["workloads"].values() if w["state"] == "Admitted")
    return dict(sorted(counts.items()))
