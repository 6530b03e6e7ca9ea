"""The simulator: the JSON contract, time, usage series, budgets, summary figures."""

from __future__ import annotations

import gc

import pytest
import yaml

from fairshare.errors import ValidationError
from fairshare.simulation.scenario import parse_scenario
from fairshare.simulation.simulator import jain_index, simulate
from fairshare.simulation.traces import multi_user_trace
from fairshare.types import TIME_AWARE

BASE = """
name: sim
clock: {horizon: 2h, tick: 30m}
policy: {usageHalfLifeTime: 1h, usageSamplingInterval: 5m}
resourceFlavors: [{name: default}]
clusterQueues:
  - name: cq
    quotas: [{flavor: default, resources: {cpu: {nominal: 4}, nvidia.com/gpu: {nominal: 2}}}]
localQueues:
  - {name: a/main, clusterQueue: cq}
  - {name: b/main, clusterQueue: cq}
workloads: []
"""


def scenario(**changes) -> dict:
    document = yaml.safe_load(BASE)
    document.update(changes)
    return document


def job(
    name: str, queue: str = "a/main", cpu: str = "1", duration: str | None = "1h", submit: str = "0s", **extra
) -> dict:
    entry = {"name": name, "localQueue": queue, "submitAt": submit, "podSets": [{"count": 1, "requests": {"cpu": cpu}}]}
    if duration is not None:
        entry["duration"] = duration
    entry.update(extra)
    return entry


def run(document: dict) -> dict:
    return simulate(parse_scenario(document))


def test_the_output_has_every_key_of_the_contract():
    result = run(scenario(workloads=[job("j1")]))
    assert set(result) >= {"scenario", "events", "workloads", "series", "summary"}
    assert result["scenario"] == "sim"
    event = result["events"][0]
    assert event == {
        "t": 0,
        "type": "admitted",
        "workload": "j1",
        "localQueue": "a/main",
        "clusterQueue": "cq",
        "flavors": {"cpu": "default"},
    }
    entry = result["workloads"]["j1"]
    assert set(entry) >= {"state", "admittedAt", "finishedAt", "waitSeconds", "evictions", "pendingReason"}
    assert (
        entry["state"],
        entry["admittedAt"],
        entry["finishedAt"],
        entry["waitSeconds"],
        entry["evictions"],
        entry["pendingReason"],
    ) == ("Finished", 0, 3600, 0, 0, None)
    series = result["series"]
    assert set(series) == {"t", "allocation", "usage", "fairShare"}
    assert series["t"] == [0, 1800, 3600, 5400, 7200]
    assert series["allocation"]["a/main"]["cpu"] == [1, 1, 0, 0, 0]  # finished at 1h, recorded after it
    assert series["fairShare"] == {}
    summary = result["summary"]
    assert set(summary) >= {"utilization", "jainIndex", "waitSeconds", "perLocalQueue"}
    assert set(summary["waitSeconds"]) == {"p50", "p95"}


def test_horizon_zero_is_exactly_one_admission_pass_at_t0():
    result = run(scenario(clock={"horizon": "0s"}, workloads=[job("fits", cpu="4"), job("waits", cpu="1")]))
    assert result["series"]["t"] == [0]
    assert [e["type"] for e in result["events"]] == ["admitted"]
    waits = result["workloads"]["waits"]
    assert waits["state"] == "Pending"
    assert waits["pendingReason"] == {
        "code": "InsufficientQuota",
        "message": "insufficient quota for cpu in flavor default of ClusterQueue cq: 1 more needed "
        "(requests 1, 0 available)",
        "position": 1,
        "shortages": [
            {
                "resource": "cpu",
                "flavor": "default",
                "requested": "1",
                "available": "0",
                "missing": "1",
                "ceiling": "4",
                "neverFits": False,
            }
        ],
    }


def test_workloads_start_when_capacity_frees_up_and_record_their_wait():
    result = run(scenario(workloads=[job("first", cpu="4"), job("second", cpu="4")]))
    second = result["workloads"]["second"]
    assert (second["admittedAt"], second["finishedAt"], second["waitSeconds"]) == (3600, 7200, 3600)
    assert result["summary"]["waitSeconds"] == {"p50": 0, "p95": 3600}


def test_usage_series_decays_with_the_half_life():
    document = scenario(workloads=[])
    document["localQueues"][0]["initialUsage"] = {"cpu": 4}
    document["clock"] = {"horizon": "2h", "tick": "1h"}
    result = run(document)
    assert result["series"]["usage"]["a/main"]["cpu"] == pytest.approx([4, 2, 1])


def test_usage_series_rises_towards_the_running_allocation():
    result = run(scenario(clock={"horizon": "2h", "tick": "1h"}, workloads=[job("j", cpu="2", duration="3h")]))
    assert result["series"]["usage"]["a/main"]["cpu"] == pytest.approx([0, 1, 1.5], abs=0.01)


def test_utilization_is_time_averaged_allocation_over_capacity():
    result = run(scenario(workloads=[job("j", cpu="2", duration="1h")]))
    # 2 of 4 CPU for half of the 2h horizon
    assert result["summary"]["utilization"]["cpu"] == pytest.approx(0.25)
    assert result["summary"]["utilization"]["nvidia.com/gpu"] == 0


def test_jain_index_of_equal_weighted_allocations_is_one_and_drops_when_unequal():
    equal = run(scenario(workloads=[job("a", "a/main", cpu="2"), job("b", "b/main", cpu="2")]))
    assert equal["summary"]["jainIndex"] == pytest.approx(1.0)
    unequal = run(scenario(workloads=[job("a", "a/main", cpu="3"), job("b", "b/main", cpu="1")]))
    assert unequal["summary"]["jainIndex"] == pytest.approx((0.75 + 0.25) ** 2 / (2 * (0.75**2 + 0.25**2)), abs=1e-3)


def test_jain_index_formula():
    assert jain_index([1.0, 1.0, 1.0]) == 1.0
    assert jain_index([1.0, 0.0]) == pytest.approx(0.5)
    assert jain_index([]) == 1.0


def test_per_local_queue_summary_counts_and_waits():
    result = run(
        scenario(workloads=[job("a1", cpu="4"), job("a2", cpu="4"), job("b1", "b/main", cpu="1", submit="30m")])
    )
    per = result["summary"]["perLocalQueue"]
    assert (per["a/main"]["submitted"], per["a/main"]["finished"]) == (2, 2)
    assert per["b/main"]["waitSeconds"] == {"p50": 5400, "p95": 5400}  # from 30m until a2 finished at 2h
    assert (result["workloads"]["b1"]["state"], result["workloads"]["b1"]["admittedAt"]) == ("Admitted", 7200)


def test_without_horizon_the_run_ends_when_everything_has_finished():
    document = scenario(workloads=[job("a", cpu="4", duration="10m"), job("b", cpu="4", duration="10m")])
    del document["clock"]
    result = run(document)
    assert result["summary"]["endSeconds"] == 1200
    assert all(w["state"] == "Finished" for w in result["workloads"].values())


def test_without_horizon_every_workload_needs_a_duration():
    document = scenario(workloads=[job("forever", duration=None)])
    del document["clock"]
    with pytest.raises(ValidationError, match=r"clock\.horizon: is required when a workload has no duration"):
        run(document)


def test_a_wall_time_budget_holds_its_queue_once_used_up():
    document = scenario(
        workloads=[
            job("a1", cpu="1", duration="2h"),
            job("a2", cpu="1", duration="2h"),
            job("late", cpu="1", submit="90m"),
        ]
    )
    document["budgets"] = [{"localQueue": "a/main", "kind": "WallTime", "allocatedHours": 2, "action": "Hold"}]
    result = run(document)
    held = [e for e in result["events"] if e["type"] == "held"]
    assert [(e["t"], e["localQueue"], e["reason"]) for e in held] == [(3600, "a/main", "BudgetExhausted")]
    assert result["workloads"]["a1"]["state"] == "Finished"  # Hold lets running work finish
    late = result["workloads"]["late"]
    assert late["state"] == "Pending" and late["pendingReason"]["code"] == "BudgetExhausted"
    assert "2 of 2 hours used" in late["pendingReason"]["message"]


def test_a_resource_hours_budget_with_hold_and_drain_evicts_running_work():
    document = scenario(
        workloads=[
            {
                "name": "gpu-job",
                "localQueue": "b/main",
                "duration": "2h",
                "podSets": [{"count": 2, "requests": {"nvidia.com/gpu": "1"}}],
            }
        ]
    )
    document["budgets"] = [
        {
            "localQueue": "b/main",
            "kind": "ResourceHours",
            "resource": "nvidia.com/gpu",
            "allocatedHours": 1,
            "action": "HoldAndDrain",
        }
    ]
    result = run(document)
    types = [(e["t"], e["type"]) for e in result["events"]]
    assert types == [(0, "admitted"), (1800, "held"), (1800, "evicted")]
    evicted = result["events"][2]
    assert (evicted["workload"], evicted["reason"]) == ("gpu-job", "BudgetExhausted")
    assert result["workloads"]["gpu-job"]["evictions"] == 1


def test_preempted_workloads_go_back_to_pending_and_rerun_in_full():
    document = scenario(
        workloads=[
            job("low", cpu="4", duration="1h", priority=0),
            job("high", cpu="4", duration="30m", priority=9, submit="10m"),
        ]
    )
    document["clusterQueues"][0]["preemption"] = {"withinClusterQueue": "LowerPriority"}
    result = run(document)
    low = result["workloads"]["low"]
    assert low["evictions"] == 1
    assert (low["admittedAt"], low["finishedAt"]) == (2400, 6000)  # restarted after high finished at 40m
    preempted = [e for e in result["events"] if e["type"] == "preempted"]
    assert [(e["t"], e["workload"], e["preemptor"]) for e in preempted] == [(600, "low", "high")]


def test_the_same_scenario_gives_the_same_result():
    document = scenario(
        workloads=[
            job(f"j{i}", "a/main" if i % 2 else "b/main", cpu="1", duration=f"{10 + i}m", submit=f"{i}m")
            for i in range(12)
        ]
    )
    document["generators"] = [
        {
            "localQueue": "a/main",
            "count": 30,
            "seed": 3,
            "interarrival": "2m",
            "duration": "15m",
            "podSets": [{"count": 1, "requests": {"cpu": "500m"}}],
        }
    ]
    assert run(document) == run(document)


def test_time_aware_scopes_report_fair_share_series():
    document = scenario(workloads=[job("a1", cpu="4", duration="3h")])
    document["clusterQueues"][0]["admissionScope"] = {"admissionMode": "TimeAware"}
    result = run(document)
    assert result["series"]["fairShare"]["a/main"]["cpu"][0] == 4


def test_a_run_leaves_no_reference_cycles_behind():
    document = scenario(workloads=[job(f"j{i}", cpu="1", duration="20m", submit=f"{i}m") for i in range(10)])
    document["clusterQueues"][0]["preemption"] = {"withinClusterQueue": "LowerPriority"}
    parsed = parse_scenario(document)
    gc.collect()
    gc.disable()
    try:
        simulate(parsed)
        assert gc.collect() == 0  # the collector is paused during runs, so nothing may need it
    finally:
        gc.enable()


def test_a_time_aware_run_leaves_no_reference_cycles_behind():
    # TimeAware keeps lazily computed history and lazily computed ties: neither may point back
    # at what holds it
    parsed = parse_scenario(multi_user_trace(seed=5, users=6, jobs=60, days=1, mode=TIME_AWARE))
    gc.collect()
    gc.disable()
    try:
        result = simulate(parsed)
        assert gc.collect() == 0
    finally:
        gc.enable()
    assert result["series"]["fairShare"]  # the fair shares (and so the history) were computed


def test_a_budget_starts_from_the_hours_already_used():
    """A live export carries the current period's usage: exhaustion comes that much earlier."""
    document = scenario(workloads=[job("a1", cpu="1", duration="2h"), job("late", cpu="1", submit="90m")])
    document["budgets"] = [
        {"localQueue": "a/main", "kind": "WallTime", "allocatedHours": 2, "usedHours": 1.5, "action": "Hold"}
    ]
    result = run(document)
    held = [e for e in result["events"] if e["type"] == "held"]
    assert [e["t"] for e in held] == [1800]  # 0.5 h left at one running workload
    assert result["workloads"]["late"]["pendingReason"]["code"] == "BudgetExhausted"


def test_a_budget_already_used_up_holds_its_queue_from_the_start():
    document = scenario(workloads=[job("a1")])
    document["budgets"] = [{"localQueue": "a/main", "kind": "WallTime", "allocatedHours": 1, "usedHours": 3}]
    result = run(document)
    assert [e["type"] for e in result["events"]] == ["held"]
    assert result["workloads"]["a1"]["state"] == "Pending"


def test_progress_is_reported_in_order_up_to_one_with_a_horizon():
    document = scenario(workloads=[job(f"j{i}", submit=f"{10 * i}m") for i in range(10)])
    heard: list[float] = []
    simulate(parse_scenario(document), progress=heard.append)
    assert heard == sorted(heard) and heard[-1] == 1.0
    assert len(heard) == len(set(heard)) <= 101
    assert any(0 < value < 1 for value in heard)


def test_progress_without_a_horizon_follows_finished_work():
    document = scenario(workloads=[job(f"j{i}", cpu="4", duration="10m") for i in range(4)])
    del document["clock"]
    heard: list[float] = []
    result = simulate(parse_scenario(document), progress=heard.append)
    assert heard == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert result == run(document)  # listening changes nothing


def test_a_run_that_starts_mid_period_renews_at_the_first_renewal_given():
    document = scenario(workloads=[job("a1", duration="2h"), job("late", submit="40m", duration="10m")])
    document["budgets"] = [
        {
            "localQueue": "a/main",
            "kind": "WallTime",
            "allocatedHours": 1,
            "usedHours": 0.5,
            "renewal": "days",
            "renewalDays": 1,
            "firstRenewalAt": "1h",
        }
    ]
    result = run(document)
    kinds = [(e["t"], e["type"]) for e in result["events"] if e["type"] in ("held", "resumed")]
    # 0.5 h left at one job; renewed an hour in; the new hour lasts 10 min at two jobs, 40 at one
    assert kinds == [(1800, "held"), (3600, "resumed"), (6600, "held")]
    assert result["workloads"]["late"]["admittedAt"] == 3600
