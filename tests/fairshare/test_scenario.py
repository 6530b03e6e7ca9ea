"""Scenario files: the contract's fields, validation with field paths, and --set edits."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from fairshare.errors import ValidationError
from fairshare.simulation.scenario import apply_set, expand_generators, load_scenario, parse_scenario
from tests.fairshare.builders import SCENARIOS

CONTRACT_EXAMPLE = """
name: two-teams
clock: {horizon: 24h, tick: 1m}
policy:
  usageHalfLifeTime: 1h
  usageSamplingInterval: 5m
  resourceWeights: {cpu: 1, nvidia.com/gpu: 10}
  resetInactivityPeriod: 0s
  kValue: 1.0
  usageWindow: {size: 7d, type: sliding}
resourceFlavors: [{name: default}]
cohorts:
  - {name: org, parent: null, weight: 1,
     admissionScope: {admissionMode: UsageBasedAdmissionFairSharing},
     quotas: [{flavor: default, resources: {cpu: {nominal: 16}}}]}
clusterQueues:
  - name: cq-a
    cohort: org
    weight: 1
    queueingStrategy: BestEffortFIFO
    admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}
    quotas: [{flavor: default, resources: {cpu: {nominal: 8, borrowingLimit: 8}}}]
    preemption: {withinClusterQueue: Never, reclaimWithinCohort: Never}
namespaces: [{name: team-a, weight: 1, quota: {cpu: 16}}]
localQueues:
  - {name: team-a/main, clusterQueue: cq-a, weight: 1, initialUsage: {cpu: 4}}
budgets:
  - {localQueue: team-a/main, kind: WallTime, allocatedHours: 100, action: Hold}
workloads:
  - {name: job-1, localQueue: team-a/main, priority: 0, createdAt: -10s, submitAt: 0s,
     duration: 2h, podSets: [{count: 4, requests: {cpu: "1", memory: 2Gi}}]}
generators:
  - {localQueue: team-a/main, count: 100, seed: 1, interarrival: 5m, duration: 30m,
     podSets: [{count: 1, requests: {cpu: "1"}}]}
"""


def contract() -> dict:
    return yaml.safe_load(CONTRACT_EXAMPLE)


def error_of(document: dict) -> str:
    with pytest.raises(ValidationError) as caught:
        parse_scenario(document)
    return str(caught.value)


def test_the_design_contract_example_loads_with_every_field():
    scenario = parse_scenario(contract())
    assert scenario.name == "two-teams"
    assert (scenario.clock.horizon_seconds, scenario.clock.tick_seconds) == (86400, 60)
    assert scenario.policy.resource_weight("nvidia.com/gpu") == 10
    assert scenario.cohorts[0].quotas[0].resources["cpu"].nominal == 16_000
    queue = scenario.cluster_queues[0]
    assert (queue.cohort, queue.admission_mode, queue.quotas[0].resources["cpu"].borrowing_limit) == (
        "org",
        "UsageBasedAdmissionFairSharing",
        8000,
    )
    assert scenario.initial_usage["team-a/main"] == {"cpu": 4000}
    assert scenario.budgets[0].allocated_hours == 100
    job = scenario.workloads[0]
    assert (job.created_at, job.submit_at, job.duration_seconds) == (-10, 0, 7200)
    assert job.requests == {"cpu": 4000, "memory": 8 * 2**30 * 1000}  # 4 pods x 2Gi
    assert len(scenario.all_workloads()) == 101


def test_json_scenarios_load_like_yaml(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(contract()))
    assert load_scenario(path).name == "two-teams"


def test_every_scenario_file_under_tests_scenarios_is_valid():
    files = sorted(SCENARIOS.glob("*.yaml"))
    assert files
    for path in files:
        load_scenario(path)


def test_generators_are_seeded_and_reproducible():
    generators = parse_scenario(contract()).generators
    first, second = expand_generators(generators), expand_generators(generators)
    assert first == second
    times = [w.submit_at for w in first]
    assert times == sorted(times) and times[0] == 0 and times[-1] > 0
    assert all(t == int(t) for t in times)
    other = contract()
    other["generators"][0]["seed"] = 2
    assert [w.submit_at for w in expand_generators(parse_scenario(other).generators)] != times


@pytest.mark.parametrize(
    "edit, expected",
    [
        (
            lambda d: d["clusterQueues"][0]["quotas"][0]["resources"]["cpu"].update(nominal=-1),
            "clusterQueues[0].quotas[0].resources.cpu.nominal: must not be negative, got '-1'",
        ),
        (
            lambda d: d["clusterQueues"][0].update(cohort="nope"),
            "clusterQueues[0].cohort: unknown cohort 'nope' (declare it in cohorts)",
        ),
        (
            lambda d: d["localQueues"][0].update(clusterQueue="nope"),
            "localQueues[0].clusterQueue: unknown ClusterQueue 'nope'",
        ),
        (lambda d: d["workloads"][0].update(localQueue="x/y"), "workloads[0].localQueue: unknown LocalQueue 'x/y'"),
        (lambda d: d["localQueues"][0].update(weight=-2), "localQueues[0].weight: must not be negative, got -2"),
        (lambda d: d["namespaces"][0].update(weight=0), "namespaces[0].weight: must be greater than 0, got 0"),
        (lambda d: d["clusterQueues"][0].update(colour="red"), "clusterQueues[0].colour: unknown field"),
        (lambda d: d.update(extra=1), "extra: unknown field"),
        (lambda d: d["workloads"][0].update(duration="soon"), "workloads[0].duration: 'soon' is not a duration"),
        (lambda d: d["policy"].update(usageHalfLifeTime="0s"), "policy.usageHalfLifeTime: must be greater than 0s"),
        (
            lambda d: d["clusterQueues"].append(copy.deepcopy(d["clusterQueues"][0])),
            "clusterQueues[1].name: duplicate ClusterQueue 'cq-a' (also at clusterQueues[0].name)",
        ),
        (
            lambda d: d["clusterQueues"][0]["quotas"][0].update(flavor="gpu"),
            "clusterQueues[0].quotas[0].flavor: unknown resource flavor 'gpu'",
        ),
        (
            lambda d: d["clusterQueues"][0]["quotas"][0]["resources"]["cpu"].update(lendingLimit=9),
            "clusterQueues[0].quotas[0].resources.cpu.lendingLimit: must not exceed the nominal quota",
        ),
        (
            lambda d: d["clusterQueues"][0].update(queueingStrategy="LIFO"),
            "clusterQueues[0].queueingStrategy: must be one of StrictFIFO, BestEffortFIFO, got 'LIFO'",
        ),
        (
            lambda d: d["clusterQueues"][0]["admissionScope"].update(admissionMode="Lottery"),
            "clusterQueues[0].admissionScope.admissionMode: must be one of",
        ),
        (lambda d: d["localQueues"][0].update(name="no-namespace"), "localQueues[0].name: expected namespace/name"),
        (lambda d: d["budgets"][0].update(kind="ResourceHours"), "budgets[0].resource: is required"),
        (
            lambda d: d["budgets"][0].update(namespace="team-a"),
            "budgets[0]: needs exactly one of localQueue, namespace or clusterQueue",
        ),
        (lambda d: d["budgets"][0].update(action="Explode"), "budgets[0].action: must be one of Hold, HoldAndDrain"),
        (
            lambda d: d["workloads"][0]["podSets"][0].update(count=0),
            "workloads[0].podSets[0].count: must be at least 1",
        ),
        (
            lambda d: d["workloads"][0]["podSets"][0]["requests"].update(cpu="lots"),
            "workloads[0].podSets[0].requests.cpu: 'lots' is not a valid Kubernetes quantity",
        ),
        (
            lambda d: d["workloads"][0]["podSets"][0]["requests"].update(cpu="1e999999"),
            "workloads[0].podSets[0].requests.cpu: '1e999999' is out of range",
        ),
        (
            lambda d: d["workloads"][0]["podSets"][0]["requests"].update(cpu="١٢"),
            "workloads[0].podSets[0].requests.cpu: '١٢' is not a valid Kubernetes quantity",
        ),
        (
            lambda d: d["workloads"].append(dict(d["workloads"][0])),
            "workloads[1].name: duplicate workload 'job-1' (also at workloads[0].name)",
        ),
    ],
)
def test_bad_input_names_the_field(edit, expected):
    document = contract()
    edit(document)
    assert error_of(document).startswith(expected)


def test_cohort_cycles_are_rejected():
    document = contract()
    document["cohorts"] = [{"name": "org", "parent": "b"}, {"name": "b", "parent": "org"}]
    assert error_of(document).startswith("cohorts[0].parent: cohort parents form a cycle")


def test_limits_need_a_cohort():
    document = contract()
    del document["clusterQueues"][0]["cohort"]
    assert error_of(document) == (
        "clusterQueues[0].quotas[0].resources.cpu.borrowingLimit: needs a parent: ClusterQueue cq-a is not in a cohort"
    )


def test_flavors_sharing_a_resource_must_cover_the_same_resources():
    document = contract()
    document["resourceFlavors"].append({"name": "spot"})
    document["clusterQueues"][0]["quotas"].append(
        {"flavor": "spot", "resources": {"cpu": {"nominal": 1}, "memory": {"nominal": "1Gi"}}}
    )
    assert error_of(document).startswith("clusterQueues[0].quotas: flavors 'default' and 'spot' both cover cpu")


# --- --set ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "assignment, check",
    [
        ("localQueues.team-a/main.weight=3", lambda s: s.local_queues[0].weight == 3),
        ("clusterQueues.cq-a.weight=2", lambda s: s.cluster_queues[0].weight == 2),
        ("policy.kValue=0", lambda s: s.policy.k_value == 0),
        ("namespaces.team-a.weight=2", lambda s: s.namespaces[0].weight == 2),
        (
            "cohorts.org.admissionScope.admissionMode=DominantResourceShare",
            lambda s: s.cohorts[0].admission_mode == "DominantResourceShare",
        ),
        (
            "clusterQueues.cq-a.quotas.default.cpu.nominal=10",
            lambda s: s.cluster_queues[0].quotas[0].resources["cpu"].nominal == 10_000,
        ),
        (
            "clusterQueues.cq-a.quotas.default.resources.cpu.lendingLimit=2",
            lambda s: s.cluster_queues[0].quotas[0].resources["cpu"].lending_limit == 2000,
        ),
        ("policy.resourceWeights.nvidia.com/gpu=4", lambda s: s.policy.resource_weight("nvidia.com/gpu") == 4),
        ("budgets.team-a/main.allocatedHours=5", lambda s: s.budgets[0].allocated_hours == 5),
        ("budgets.0.action=HoldAndDrain", lambda s: s.budgets[0].action == "HoldAndDrain"),
        (
            "clusterQueues.cq-a.preemption.withinClusterQueue=LowerPriority",
            lambda s: s.cluster_queues[0].preemption.within_cluster_queue == "LowerPriority",
        ),
        ("clock.horizon=1h", lambda s: s.clock.horizon_seconds == 3600),
        (
            "clusterQueues.cq-a.quotas.default.nvidia.com/gpu.nominal=4",
            lambda s: s.cluster_queues[0].quotas[0].resources["nvidia.com/gpu"].nominal == 4000,
        ),
        ("namespaces.team-a.quota.memory=8Gi", lambda s: s.namespaces[0].quota["memory"] == 8 * 2**30 * 1000),
    ],
)
def test_set_edits_fields_by_path(assignment, check):
    document = contract()
    apply_set(document, assignment)
    assert check(parse_scenario(document))


def test_set_creates_a_missing_admission_scope():
    document = contract()
    del document["cohorts"][0]["admissionScope"]
    apply_set(document, "cohorts.org.admissionScope.admissionMode=TimeAware")
    assert parse_scenario(document).cohorts[0].admission_mode == "TimeAware"


@pytest.mark.parametrize(
    "assignment, expected",
    [
        ("clusterQueues.nope.weight=2", "--set clusterQueues.nope.weight: no clusterQueues entry named 'nope'"),
        ("weight", "--set weight: expected path=value"),
        ("colour=red", "--set colour: unknown top-level field 'colour'"),
        ("name.first=x", "--set name.first: cannot go into 'name': it is a value, not a mapping"),
        ("localQueues.team-a/main=3", "--set localQueues.team-a/main: the path names a whole entry"),
    ],
)
def test_bad_set_paths_get_a_one_line_error(assignment, expected):
    with pytest.raises(ValidationError) as caught:
        apply_set(contract(), assignment)
    assert str(caught.value).startswith(expected)
    assert "\n" not in str(caught.value)


def test_a_set_value_is_validated_like_the_file():
    document = contract()
    apply_set(document, "localQueues.team-a/main.weight=-1")
    assert error_of(document) == "localQueues[0].weight: must not be negative, got -1"


def test_budget_used_hours_default_to_zero_and_must_not_be_negative():
    document = contract()
    assert parse_scenario(document).budgets[0].used_hours == 0
    document["budgets"][0]["usedHours"] = 12.5
    assert parse_scenario(document).budgets[0].used_hours == 12.5
    document["budgets"][0]["usedHours"] = -1
    assert error_of(document) == "budgets[0].usedHours: must not be negative, got -1"


def test_first_renewal_needs_a_renewal_and_falls_within_one_period():
    document = contract()
    document["budgets"][0]["firstRenewalAt"] = "2d"
    assert error_of(document) == (
        "budgets[0].firstRenewalAt: only used with a weekly or days renewal (a monthly one counts from its anchor)"
    )
    document["budgets"][0]["renewal"] = "weekly"
    assert parse_scenario(document).budgets[0].first_renewal_seconds == 2 * 86400
    document["budgets"][0]["firstRenewalAt"] = "8d"
    assert error_of(document) == "budgets[0].firstRenewalAt: must be after 0s and at most one renewal period"
