"""What an edit changes: database fields, environment variables, simulation-only changes."""

from __future__ import annotations

from playground import documents
from playground.policy_diff import DATABASE, ENVIRONMENT, SIMULATION, PolicyDelta, environment_lines, policy_deltas
from playground.presets import get_preset


def deltas_for(slug: str, edits: list[str]) -> list[PolicyDelta]:
    document = get_preset(slug).document()
    _, edited = documents.apply_edits(document, edits)
    return policy_deltas(documents.validate(document), edited)


def test_given_weight_edits_then_each_is_a_database_change_with_before_and_after():
    deltas = deltas_for("volcano-16cpu", ["clusterQueues.q2.weight=3", "namespaces.ns4.weight=6"])
    assert [(d.target, d.kind, d.name, d.field, d.before, d.after) for d in deltas] == [
        (DATABASE, "clusterQueue", "q2", "weight", 1, 3),
        (DATABASE, "namespace", "ns4", "weight", 1, 6),
    ]
    assert deltas[0].label == "ClusterQueue q2 weight"


def test_given_a_quota_edit_then_the_quotas_before_and_after_are_quantities():
    deltas = deltas_for("kep4136-entry-penalty", ["clusterQueues.shared.quotas.default.cpu.nominal=3500m"])
    assert len(deltas) == 1
    assert deltas[0].field == "quotas"
    assert deltas[0].before == {"default": {"cpu": {"nominal": "2"}}}
    assert deltas[0].after == {"default": {"cpu": {"nominal": "3500m"}}}


def test_given_admission_mode_and_preemption_edits_then_they_are_database_changes():
    deltas = deltas_for(
        "volcano-16cpu",
        [
            "cohorts.cluster.admissionScope.admissionMode=UsageBasedAdmissionFairSharing",
            "clusterQueues.q1.preemption.reclaimWithinCohort=Any",
        ],
    )
    assert [(d.target, d.kind, d.field, d.before, d.after) for d in deltas] == [
        (DATABASE, "cohort", "admissionMode", "DominantResourceShare", "UsageBasedAdmissionFairSharing"),
        (DATABASE, "clusterQueue", "preemption.reclaimWithinCohort", "Never", "Any"),
    ]


def test_given_a_budget_edit_then_allocation_is_a_database_change_of_the_named_budget():
    deltas = deltas_for("kep28-budget", ["budgets.team-a-hours.allocatedHours=20", "budgets.team-a-hours.usedHours=3"])
    assert [(d.target, d.kind, d.name, d.field, d.before, d.after) for d in deltas] == [
        (DATABASE, "budget", "team-a-hours", "allocatedHours", 12, 20),
        (SIMULATION, "budget", "team-a-hours", "usedHours", 0, 3),
    ]


def test_given_fair_sharing_knobs_then_they_are_environment_changes_with_the_variable_to_set():
    document = get_preset("kai-two-queues").document()
    edits = [
        "policy.kValue=0.5",
        "policy.usageHalfLifeTime=30m",
        "policy.usageWindow.type=tumbling",
        "policy.resourceWeights.nvidia.com/gpu=10",
    ]
    _edited_document, edited = documents.apply_edits(document, edits)
    deltas = policy_deltas(documents.validate(document), edited)
    assert {d.target for d in deltas} == {ENVIRONMENT}
    assert environment_lines(deltas, edited.policy) == [
        "USAGE_HALF_LIFE_TIME=30m",
        "RESOURCE_WEIGHTS=nvidia.com/gpu=10",
        "K_VALUE=0.5",
        "USAGE_WINDOW=4h,tumbling",
    ]


def test_given_workload_and_clock_edits_then_they_are_simulation_only():
    deltas = deltas_for("kep28-budget", ["clock.horizon=12h", "generators.a.count=30"])
    assert [(d.target, d.field) for d in deltas] == [(SIMULATION, "clock"), (SIMULATION, "workloads")]
    assert deltas[1].before == "48 workloads" and deltas[1].after == "54 workloads"


def test_a_delta_survives_its_json_form():
    delta = deltas_for("volcano-16cpu", ["namespaces.ns1.weight=2.5"])[0]
    assert PolicyDelta.from_dict(delta.to_dict()) == delta
    assert delta.after == 2.5
