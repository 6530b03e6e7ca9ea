"""Safe admission in the simulator (opt-in: a budget's ``safeAdmission: true`` and a workload's
``maxRuntime``), on the same rule as the live gate (``fairshare.usage.budgets``)."""

from __future__ import annotations

import pytest
import yaml

from fairshare.errors import ValidationError
from fairshare.simulation.scenario import parse_scenario
from fairshare.simulation.simulator import simulate

BASE = """
name: safe-admission
clock: {horizon: 6h, tick: 30m}
policy: {usageHalfLifeTime: 1h, usageSamplingInterval: 5m}
resourceFlavors: [{name: a100}]
clusterQueues:
  - name: gpu
    quotas:
      - {flavor: a100, resources: {cpu: {nominal: 16}, nvidia.com/gpu: {nominal: 8}}}
namespaces: [{name: a}]
localQueues: [{name: a/main, clusterQueue: gpu}]
workloads: []
"""


def job(
    name: str, *, gpus: str = "1", duration: str = "1h", max_runtime: str | None = None, submit: str = "0s"
) -> dict:
    entry = {
        "name": name,
        "localQueue": "a/main",
        "submitAt": submit,
        "duration": duration,
        "podSets": [{"count": 1, "requests": {"cpu": "1", "nvidia.com/gpu": gpus}}],
    }
    if max_runtime is not None:
        entry["maxRuntime"] = max_runtime
    return entry


def gpu_budget(hours: float = 2, **extra: object) -> dict:
    return {
        "name": "gpus",
        "localQueue": "a/main",
        "kind": "ResourceHours",
        "resource": "nvidia.com/gpu",
        "allocatedHours": hours,
        "safeAdmission": True,
        **extra,
    }


def run(workloads: list[dict], budgets: list[dict]) -> dict:
    document = yaml.safe_load(BASE)
    document["workloads"], document["budgets"] = workloads, budgets
    return simulate(parse_scenario(document))


def admitted(result: dict) -> dict[str, float]:
    return {e["workload"]: e["t"] for e in result["events"] if e["type"] == "admitted"}


def test_given_a_max_runtime_that_fits_the_budget_exactly_then_the_workload_is_admitted():
    result = run([job("fits", max_runtime="7200s")], [gpu_budget(2)])  # 1 GPU x 2h = 2 GPU-hours
    assert admitted(result) == {"fits": 0}


def test_given_a_max_runtime_that_overruns_by_one_second_then_the_workload_waits_with_the_budget_reason():
    result = run([job("over", max_runtime="7201s")], [gpu_budget(2)])
    assert admitted(result) == {}
    reason = result["workloads"]["over"]["pendingReason"]
    assert reason["code"] == "BudgetInsufficient"
    assert "maximum runtime of 7201s" in reason["message"] and "gpus has 2 of 2 left" in reason["message"]


def test_given_safe_admission_off_then_the_same_workload_starts_and_the_budget_holds_later():
    result = run([job("over", max_runtime="7201s", duration="3h")], [gpu_budget(2, safeAdmission=False)])
    assert admitted(result) == {"over": 0}
    assert [e["t"] for e in result["events"] if e["type"] == "held"] == [7200]
    # maxRuntime cuts the run, as the live cluster ends a workload at its maximum runtime.
    assert result["workloads"]["over"]["finishedAt"] == 7201


def test_given_one_pass_then_admissions_reserve_their_worst_case_and_a_finish_gives_it_back():
    result = run(
        [job(f"j{i}", duration="30m", max_runtime="1h") for i in range(3)],
        [gpu_budget(2)],
    )
    # Two worst cases of 1 GPU-hour fill the budget; the third waits until both finished at
    # 30m, having used 1 GPU-hour: the 1 left is exactly its worst case.
    assert admitted(result) == {"j0": 0, "j1": 0, "j2": 1800}


def test_given_a_period_ending_before_the_max_runtime_then_only_the_rest_of_the_period_counts():
    budget = gpu_budget(2, renewal="weekly", firstRenewalAt="1h")
    result = run([job("long", gpus="2", duration="30m", max_runtime="8h")], [budget])
    assert admitted(result) == {"long": 0}  # 2 GPUs x the 1h left in the period = 2 GPU-hours


def test_given_workloads_without_a_max_runtime_then_safe_admission_leaves_them_to_the_hold():
    result = run([job("free", duration="3h")], [gpu_budget(2)])
    assert admitted(result) == {"free": 0}
    assert [e["t"] for e in result["events"] if e["type"] == "held"] == [7200]


@pytest.mark.parametrize(
    ("where", "patch", "field"),
    [
        ("budgets", {"safeAdmission": "yes"}, "budgets[0].safeAdmission"),
        ("workloads", {"maxRuntime": "0s"}, "workloads[0].maxRuntime"),
    ],
)
def test_given_bad_safe_admission_fields_then_the_error_names_the_field(where, patch, field):
    document = yaml.safe_load(BASE)
    document["workloads"], document["budgets"] = [job("w", max_runtime="1h")], [gpu_budget(2)]
    document[where][0].update(patch)
    with pytest.raises(ValidationError) as error:
        parse_scenario(document)
    assert error.value.field == field
