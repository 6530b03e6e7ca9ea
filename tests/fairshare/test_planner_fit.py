"""What fits, what waits and why: quotas, namespaces, holds, stop policies, reasons, positions."""

from __future__ import annotations

from fairshare.admission.planner import plan
from fairshare.types import (
    BLOCKED_BY_STRICT_FIFO_HEAD,
    BUDGET_EXHAUSTED,
    INSUFFICIENT_QUOTA,
    NAMESPACE_QUOTA_EXCEEDED,
    QUEUE_STOPPED,
    USAGE_BASED,
    WAITING_FOR_FAIR_SHARE,
    Cohort,
    Hold,
    Namespace,
    UsageState,
    node_id,
)
from tests.fairshare.builders import CPU, admitted, cq, lq, quotas, reasons, snapshot, usage, wl


def test_strict_fifo_head_that_does_not_fit_blocks_its_queue():
    s = snapshot(
        [cq("cq", cpu=4, strategy="StrictFIFO")],
        [lq("a/q", "cq")],
        [wl("big", "a/q", cpu=5, t=0), wl("small", "a/q", cpu=1, t=1), wl("tiny", "a/q", cpu=1, t=2)],
    )
    result = plan(s, 0)
    assert admitted(result) == []
    why = reasons(result)
    assert why["big"].code == INSUFFICIENT_QUOTA
    assert why["small"].code == why["tiny"].code == BLOCKED_BY_STRICT_FIFO_HEAD
    assert "head big cannot be admitted" in why["small"].message


def test_best_effort_fifo_tries_the_next_when_the_head_does_not_fit():
    s = snapshot(
        [cq("cq", cpu=4)],
        [lq("a/q", "cq")],
        [wl("big", "a/q", cpu=5, t=0), wl("small", "a/q", cpu=1, t=1), wl("tiny", "a/q", cpu=1, t=2)],
    )
    result = plan(s, 0)
    assert admitted(result) == ["small", "tiny"]
    assert reasons(result)["big"].code == INSUFFICIENT_QUOTA


def test_strict_fifo_blocks_only_its_own_queue():
    s = snapshot(
        [cq("strict", cpu=1, strategy="StrictFIFO", cohort=None), cq("other", cpu=1)],
        [lq("a/q", "strict"), lq("b/q", "other")],
        [wl("stuck", "a/q", cpu=2, t=0), wl("behind", "a/q", cpu=1, t=1), wl("free", "b/q", cpu=1, t=2)],
    )
    assert admitted(plan(s, 0)) == ["free"]


def test_insufficient_quota_names_resource_flavor_and_how_much_more_is_needed():
    s = snapshot(
        [cq("cq", cpu=4)],
        [lq("a/q", "cq")],
        [wl("run", "a/q", cpu=3, admitted=True, cluster_queue="cq"), wl("wait", "a/q", cpu=2.5)],
    )
    why = reasons(plan(s, 0))["wait"]
    assert why.code == INSUFFICIENT_QUOTA
    assert why.message == (
        "insufficient quota for cpu in flavor default of ClusterQueue cq: 1500m more needed "
        "(requests 2500m, 1 available)"
    )


def test_a_request_above_what_the_queue_can_ever_get_says_so():
    s = snapshot([cq("cq", cpu=4)], [lq("a/q", "cq")], [wl("huge", "a/q", cpu=64)])
    assert reasons(plan(s, 0))["huge"].message == (
        "requests 64 cpu but ClusterQueue cq can never get more than 4 in flavor default"
    )


def test_a_resource_without_quota_in_the_queue_is_named():
    s = snapshot([cq("cq", cpu=4)], [lq("a/q", "cq")], [wl("gpu-job", "a/q", cpu=1, **{"nvidia.com/gpu": 1})])
    assert reasons(plan(s, 0))["gpu-job"].message == "ClusterQueue cq has no quota for nvidia.com/gpu in any flavor"


def test_memory_shortfalls_are_written_in_binary_units():
    s = snapshot(
        [cq("cq", flavors=quotas(cpu=8, memory=4 * 2**30))],
        [lq("a/q", "cq")],
        [
            wl("run", "a/q", cpu=1, memory=3 * 2**30, admitted=True, cluster_queue="cq"),
            wl("mem", "a/q", cpu=1, memory=3 * 2**30),
        ],
    )
    assert "2Gi more needed (requests 3Gi, 1Gi available)" in reasons(plan(s, 0))["mem"].message


def test_namespace_hard_quota_is_never_exceeded():
    s = snapshot(
        [cq("cq", cpu=10)],
        [lq("team/a", "cq"), lq("team/b", "cq"), lq("other/a", "cq")],
        [wl("t1", "team/a", cpu=2, t=0), wl("t2", "team/b", cpu=2, t=1), wl("o1", "other/a", cpu=2, t=2)],
        namespaces=[Namespace("team", 1.0, {"cpu": 3 * CPU})],
    )
    result = plan(s, 0)
    assert admitted(result) == ["t1", "o1"]
    why = reasons(result)["t2"]
    assert why.code == NAMESPACE_QUOTA_EXCEEDED
    assert why.message == "namespace team quota for cpu is 3: 2 in use, this workload needs 2 (1 over)"


def test_namespace_quota_counts_workloads_already_running_in_any_queue():
    s = snapshot(
        [cq("one", cpu=10), cq("two", cpu=10)],
        [lq("team/a", "one"), lq("team/b", "two")],
        [wl("running", "team/a", cpu=3, admitted=True, cluster_queue="one"), wl("new", "team/b", cpu=1)],
        namespaces=[Namespace("team", 1.0, {"cpu": 3 * CPU})],
    )
    assert reasons(plan(s, 0))["new"].code == NAMESPACE_QUOTA_EXCEEDED


def test_a_budget_hold_stops_admissions_with_its_message_and_running_work_continues():
    hold = Hold("localQueue", "a/q", BUDGET_EXHAUSTED, "WallTime budget of a/q is exhausted: 100 of 100 hours used")
    s = snapshot(
        [cq("cq", cpu=10)],
        [lq("a/q", "cq"), lq("b/q", "cq")],
        [wl("running", "a/q", admitted=True, cluster_queue="cq"), wl("held", "a/q"), wl("free", "b/q")],
        holds=[hold],
    )
    result = plan(s, 0)
    assert admitted(result) == ["free"]
    assert result.evictions == ()
    why = reasons(result)["held"]
    assert (why.code, why.message) == (BUDGET_EXHAUSTED, hold.message)


def test_a_draining_hold_evicts_what_runs_under_it():
    hold = Hold("namespace", "team", BUDGET_EXHAUSTED, "team budget exhausted", drain=True)
    s = snapshot(
        [cq("cq", cpu=2)],
        [lq("team/q", "cq"), lq("b/q", "cq")],
        [wl("running", "team/q", cpu=2, admitted=True, cluster_queue="cq"), wl("b1", "b/q", cpu=2)],
        holds=[hold],
    )
    result = plan(s, 0)
    assert [(e.workload, e.code, e.message) for e in result.evictions] == [
        ("running", BUDGET_EXHAUSTED, "team budget exhausted")
    ]
    assert admitted(result) == ["b1"]  # the drained capacity is free in the same pass


def test_cluster_queue_hold_stops_all_its_local_queues():
    s = snapshot(
        [cq("cq", cpu=2)],
        [lq("a/q", "cq"), lq("b/q", "cq")],
        [wl("a1", "a/q"), wl("b1", "b/q")],
        holds=[Hold("clusterQueue", "cq", BUDGET_EXHAUSTED, "cq budget exhausted")],
    )
    result = plan(s, 0)
    assert admitted(result) == []
    assert {p.code for p in result.pending} == {BUDGET_EXHAUSTED}


def test_stop_policy_hold_stops_admissions_but_not_running_work():
    s = snapshot(
        [cq("cq", cpu=4, stop="Hold")],
        [lq("a/q", "cq")],
        [wl("running", "a/q", admitted=True, cluster_queue="cq"), wl("waiting", "a/q")],
    )
    result = plan(s, 0)
    assert admitted(result) == [] and result.evictions == ()
    why = reasons(result)["waiting"]
    assert (why.code, why.message) == (QUEUE_STOPPED, "ClusterQueue cq is stopped (stopPolicy Hold): no new admissions")


def test_stop_policy_hold_and_drain_on_a_local_queue_evicts_its_workloads():
    s = snapshot(
        [cq("cq", cpu=4)],
        [lq("a/q", "cq", stop="HoldAndDrain"), lq("b/q", "cq")],
        [
            wl("a-run", "a/q", admitted=True, cluster_queue="cq"),
            wl("b-run", "b/q", admitted=True, cluster_queue="cq"),
            wl("a-wait", "a/q"),
        ],
    )
    result = plan(s, 0)
    assert [(e.workload, e.code) for e in result.evictions] == [("a-run", QUEUE_STOPPED)]
    assert reasons(result)["a-wait"].code == QUEUE_STOPPED


def test_positions_count_each_cluster_queues_order_from_one():
    s = snapshot(
        [cq("cq", cpu=1, mode=USAGE_BASED), cq("other", cpu=0)],
        [lq("a/q", "cq"), lq("b/q", "cq"), lq("c/q", "other")],
        [wl("a1", "a/q", t=0), wl("a2", "a/q", t=1), wl("b1", "b/q", t=2), wl("b2", "b/q", t=3), wl("c1", "c/q")],
        usage=usage(**{"a/q": 0, "b/q": 1}),
    )
    result = plan(s, 0)
    assert admitted(result) == ["a1"]
    positions = [(p.cluster_queue, p.workload, p.position) for p in result.pending]
    # after a1's penalty a is still below b (56m < 1), so a2 comes before b's workloads
    assert positions == [("cq", "a2", 1), ("cq", "b1", 2), ("cq", "b2", 3), ("other", "c1", 1)]


def test_waiting_for_fair_share_names_the_queue_ahead_and_both_scores():
    s = snapshot(
        [cq("cq", cpu=1, mode=USAGE_BASED)],
        [lq("a/q", "cq"), lq("b/q", "cq")],
        [wl("a1", "a/q", t=5), wl("b1", "b/q", t=0)],
        usage=usage(**{"a/q": 1, "b/q": 2}),
    )
    result = plan(s, 0)
    assert admitted(result) == ["a1"]
    why = reasons(result)["b1"]
    assert why.code == WAITING_FOR_FAIR_SHARE
    assert why.message.startswith(
        "LocalQueue a/q was ahead in fair-share order (score 1; b/q has 2) and was admitted first"
    )
    assert "1 more needed" in why.message


def test_waiting_for_fair_share_across_cluster_queues_of_a_cohort_scope():
    s = snapshot(
        [cq("cq-a", cpu=0, cohort="org"), cq("cq-b", cpu=0, cohort="org")],
        [lq("a/q", "cq-a"), lq("b/q", "cq-b")],
        [wl("a1", "a/q", t=5), wl("b1", "b/q", t=0)],
        cohorts=[Cohort("org", admission_mode=USAGE_BASED, quotas=quotas(cpu=1))],
        usage={node_id("clusterQueue", "cq-b"): UsageState({"cpu": 2000.0})},
    )
    why = reasons(plan(s, 0))["b1"]
    assert why.code == WAITING_FOR_FAIR_SHARE
    assert why.message.startswith("ClusterQueue cq-a was ahead in fair-share order")


def test_without_fair_sharing_a_full_queue_is_insufficient_quota():
    s = snapshot([cq("cq", cpu=1)], [lq("a/q", "cq"), lq("b/q", "cq")], [wl("a1", "a/q", t=0), wl("b1", "b/q", t=1)])
    assert reasons(plan(s, 0))["b1"].code == INSUFFICIENT_QUOTA


def test_every_pending_workload_gets_exactly_one_reason():
    s = snapshot(
        [cq("cq", cpu=3, strategy="StrictFIFO")],
        [lq("a/q", "cq"), lq("b/q", "cq", stop="Hold")],
        [*(wl(f"a{i}", "a/q", cpu=2, t=i) for i in range(4)), *(wl(f"b{i}", "b/q", t=i) for i in range(3))],
    )
    result = plan(s, 0)
    assert admitted(result) == ["a0"]
    assert sorted(p.workload for p in result.pending) == ["a1", "a2", "a3", "b0", "b1", "b2"]
