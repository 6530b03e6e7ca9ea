"""The policy editor: which knobs it offers, and which edits a submission makes."""

from __future__ import annotations

from playground import documents
from playground.editor import NO_MODE, editable_fields, edits_from, grouped
from playground.presets import get_preset


def fields_of(slug: str):
    return editable_fields(documents.validate(get_preset(slug).document()))


def test_every_object_and_knob_gets_an_input_with_its_current_value():
    fields = {spec.path: spec for spec in fields_of("volcano-16cpu")}
    assert fields["clusterQueues.q2.weight"].initial == "1"
    assert fields["namespaces.ns4.weight"].initial == "1"
    assert fields["localQueues.ns1/jobs.weight"].initial == "1"
    assert fields["cohorts.cluster.admissionScope.admissionMode"].initial == "DominantResourceShare"
    assert fields["clusterQueues.q1.admissionScope.admissionMode"].initial == NO_MODE
    assert fields["cohorts.cluster.quotas.default.cpu.nominal"].initial == "16"
    assert fields["clusterQueues.q1.quotas.default.cpu.borrowingLimit"].initial == ""  # in a cohort: unlimited
    assert fields["policy.usageHalfLifeTime"].initial == "1h"
    assert fields["policy.resourceWeights.cpu"].initial == "1"


def test_budgets_are_editable_by_name():
    fields = {spec.path: spec for spec in fields_of("kep28-budget")}
    assert fields["budgets.team-a-hours.allocatedHours"].initial == "12"
    assert fields["budgets.team-a-hours.action"].choices == (("Hold", "Hold"), ("HoldAndDrain", "HoldAndDrain"))


def test_only_changed_inputs_become_edits_and_an_emptied_limit_means_no_limit():
    fields = fields_of("volcano-16cpu")
    submitted = {spec.path: spec.initial for spec in fields}
    submitted["namespaces.ns3.weight"] = " 2 "
    submitted["clusterQueues.q2.admissionScope.admissionMode"] = "UsageBasedAdmissionFairSharing"
    submitted["namespaces.ns1.weight"] = ""  # emptied: left as it was
    assert edits_from(fields, submitted) == [
        "clusterQueues.q2.admissionScope.admissionMode=UsageBasedAdmissionFairSharing",
        "namespaces.ns3.weight=2",
    ]
    document = get_preset("volcano-16cpu").document()
    document["clusterQueues"][0]["quotas"][0]["resources"]["cpu"]["borrowingLimit"] = 4
    limited = editable_fields(documents.validate(document))
    submitted = {spec.path: spec.initial for spec in limited}
    submitted["clusterQueues.q1.quotas.default.cpu.borrowingLimit"] = ""
    assert edits_from(limited, submitted) == ["clusterQueues.q1.quotas.default.cpu.borrowingLimit=null"]


def test_the_edits_the_editor_makes_are_accepted_by_the_loader():
    document = get_preset("volcano-16cpu").document()
    fields = editable_fields(documents.validate(document))
    submitted = {spec.path: spec.initial for spec in fields}
    submitted["cohorts.cluster.admissionScope.admissionMode"] = NO_MODE
    submitted["policy.usageWindow.type"] = "tumbling"
    _, scenario = documents.apply_edits(document, edits_from(fields, submitted))
    assert scenario.cohorts[0].admission_mode is None
    assert scenario.policy.usage_window.type == "tumbling"


def test_fields_are_grouped_by_kind_then_object():
    layout = grouped(fields_of("volcano-16cpu"))
    assert [group for group, _ in layout] == ["Fair sharing", "Cohorts", "ClusterQueues", "Namespaces", "LocalQueues"]
    cluster_queues = dict(layout)["ClusterQueues"]
    assert [owner for owner, _ in cluster_queues] == ["q1", "q2"]
