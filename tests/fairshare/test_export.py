"""Engine types -> scenario entries (``simulation.export``), the modes a plan carries, and the
one "highest scope wins" rule."""

from __future__ import annotations

from fairshare.admission.planner import plan
from fairshare.quota.scopes import highest_mode
from fairshare.simulation import export
from fairshare.simulation.scenario import parse_scenario
from fairshare.types import Cohort, Namespace
from tests.fairshare.builders import cq, lq, quotas, snapshot, wl


def test_plan_carries_the_mode_each_cluster_queue_was_planned_under():
    s = snapshot(
        [
            cq("a", cohort="org", mode="DominantResourceShare"),
            cq("b", cohort="org"),
            cq("solo", mode="TimeAware"),
            cq("plain"),
        ],
        [lq("t/a", "a"), lq("t/b", "b"), lq("t/solo", "solo"), lq("t/plain", "plain")],
        [wl("t/w", "t/a")],
        cohorts=[Cohort("org", admission_mode="UsageBasedAdmissionFairSharing")],
    )
    assert dict(plan(s, 0.0).modes) == {
        "a": "UsageBasedAdmissionFairSharing",  # the cohort above wins over the queue's own mode
        "b": "UsageBasedAdmissionFairSharing",
        "plain": "NoAdmissionFairSharing",
        "solo": "TimeAware",
    }


def test_highest_mode_is_the_last_node_with_a_mode_on_the_path():
    assert highest_mode([(1, "TimeAware"), (2, None), (3, "DominantResourceShare"), (4, None)]) == (
        3,
        "DominantResourceShare",
    )
    assert highest_mode([(1, None), (2, None)]) is None


def test_exported_entries_load_back_as_the_same_engine_types():
    root = Cohort("org", weight=2.0, admission_mode="UsageBasedAdmissionFairSharing", quotas=quotas(cpu=(8, 2, 1)))
    child = Cohort("team", parent="org", weight=1.5, quotas=quotas(cpu=(4, 2, 1)))
    queue = cq("cq", cpu=(4, 2, 1), cohort="team", mode="DominantResourceShare", within="LowerPriority")
    namespace = Namespace("t", weight=3.0, quota={"cpu": 2500}, within_namespace="LowerPriority")
    local = lq("t/main", "cq", weight=2.0)
    document = {
        "name": "export",
        "resourceFlavors": [{"name": "default"}],
        "cohorts": [export.cohort(root), export.cohort(child)],
        "clusterQueues": [export.cluster_queue(queue)],
        "namespaces": [export.namespace(namespace)],
        "localQueues": [export.local_queue(local, {"cpu": 1499.6, "memory": 0.2})],
    }
    assert document["cohorts"][0]["weight"] == 2 and "borrowingLimit" not in str(document["cohorts"][0])
    assert document["localQueues"][0]["initialUsage"] == {"cpu": "1500m"}
    scenario = parse_scenario(document)
    assert scenario.cohorts[0] == Cohort(
        "org", weight=2.0, admission_mode="UsageBasedAdmissionFairSharing", quotas=quotas(cpu=8)
    )
    assert scenario.cohorts[1] == child
    assert scenario.cluster_queues == (queue,)
    assert scenario.namespaces == (namespace,)
    assert scenario.local_queues == (local,)
