"""``summary.contention``: per resource, the times a workload requesting it could not be admitted
(held work aside), and the utilisation over them alone (issue 25: a long, mostly idle replay hid
a full cluster)."""

from __future__ import annotations

import yaml

from fairshare.simulation.scenario import parse_scenario
from fairshare.simulation.simulator import simulate

SCENARIO = """
name: contention
clock: {horizon: 10h, tick: 30m}
policy: {usageHalfLifeTime: 1h, usageSamplingInterval: 5m}
resourceFlavors: [{name: default}]
clusterQueues:
  - name: cq
    quotas: [{flavor: default, resources: {cpu: {nominal: 4}}}]
localQueues:
  - {name: a/main, clusterQueue: cq}
  - {name: b/main, clusterQueue: cq}
"""


def job(name: str, cpu: str, submit: str, duration: str = "1h", queue: str = "a/main", gpu: str = "0") -> dict:
    requests = {"cpu": cpu, **({"nvidia.com/gpu": gpu} if gpu != "0" else {})}
    return {
        "name": name,
        "localQueue": queue,
        "submitAt": submit,
        "duration": duration,
        "podSets": [{"count": 1, "requests": requests}],
    }


def run(workloads: list[dict], stepping: str = "event") -> dict:
    document = yaml.safe_load(SCENARIO)
    document["workloads"] = workloads
    return simulate(parse_scenario(document), stepping=stepping)


# Three full-cluster jobs queue behind each other from 00:00 to 02:00 (B waits 1 h, C 1 h 50 min),
# then three small jobs at 05:00, 06:00 and 07:00 find the cluster idle.
BUSY_THEN_IDLE = [
    job("a", "4", "0s"),
    job("b", "4", "0s"),
    job("c", "4", "10m"),
    job("d", "1", "5h"),
    job("e", "1", "6h"),
    job("f", "1", "7h"),
]


def test_given_a_busy_start_and_an_idle_rest_then_contention_is_the_busy_interval_at_full_utilisation():
    result = run(BUSY_THEN_IDLE)

    summary = result["summary"]
    # Whole run: (3 x 4 + 3 x 1) CPU-hours over 4 CPUs x 10 h.
    assert summary["utilization"] == {"cpu": 0.375}
    # Contended: someone waited from 00:00 until C was admitted at 02:00; the cluster was full then.
    assert summary["contention"] == {
        "seconds": 7200,
        "intervals": [[0, 7200]],
        "resources": {"cpu": {"seconds": 7200, "utilization": 1.0}},
    }


def test_given_nothing_ever_waits_then_there_is_no_contention():
    result = run([job("a", "1", "0s"), job("b", "1", "3h")])

    assert result["summary"]["contention"] == {"seconds": 0, "intervals": [], "resources": {}}


def test_given_work_still_pending_at_the_horizon_then_the_last_interval_ends_there():
    result = run([job("a", "4", "8h", duration="5h"), job("b", "4", "9h")])

    assert result["summary"]["contention"]["intervals"] == [[32400, 36000]]
    assert result["summary"]["contention"]["resources"] == {"cpu": {"seconds": 3600, "utilization": 1.0}}


def test_given_work_a_budget_holds_then_it_is_not_contention():
    # b/main's budget (1 workload-hour) runs out at 01:00 and holds it; its second job waits
    # from then on, but for the budget, not for quota: the cluster is not contended.
    document = yaml.safe_load(SCENARIO)
    document["budgets"] = [
        {"name": "b-hours", "localQueue": "b/main", "kind": "WallTime", "allocatedHours": 1, "action": "Hold"}
    ]
    document["workloads"] = [job("b1", "1", "0s", queue="b/main"), job("b2", "1", "1h", queue="b/main")]

    result = simulate(parse_scenario(document))

    assert result["workloads"]["b2"]["state"] == "Pending"
    assert result["summary"]["contention"] == {"seconds": 0, "intervals": [], "resources": {}}


def test_given_gpu_work_waiting_then_only_the_resources_it_requests_are_contended():
    document = yaml.safe_load(SCENARIO)
    document["clusterQueues"][0]["quotas"][0]["resources"]["nvidia.com/gpu"] = {"nominal": 1}
    document["workloads"] = [
        job("g1", "1", "0s", gpu="1"),
        job("g2", "1", "0s", gpu="1"),  # waits 00:00-01:00 for the one GPU
        job("cpu-only", "2", "0s", duration="10h"),
    ]

    contention = simulate(parse_scenario(document))["summary"]["contention"]

    # GPU: 1 of 1 busy while g2 waited; CPU: g2 requests a CPU too, so CPU counts as contended
    # then, at 3 of 4 cores (g1 and cpu-only).
    assert contention["resources"] == {
        "cpu": {"seconds": 3600, "utilization": 0.75},
        "nvidia.com/gpu": {"seconds": 3600, "utilization": 1.0},
    }


def test_given_both_steppings_then_the_contention_is_the_same():
    assert run(BUSY_THEN_IDLE)["summary"]["contention"] == run(BUSY_THEN_IDLE, "reference")["summary"]["contention"]
