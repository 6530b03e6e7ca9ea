"""Who goes first: the four admission modes, the fair tree, admission scopes, re-ranking."""

from __future__ import annotations

import pytest

from fairshare.admission.planner import plan
from fairshare.policy import FairSharingPolicy
from fairshare.types import (
    DOMINANT_RESOURCE_SHARE,
    NO_FAIR_SHARING,
    USAGE_BASED,
    Cohort,
    Namespace,
    UsageState,
    node_id,
)
from tests.fairshare.builders import (
    CPU,
    admitted,
    admitted_per_queue,
    cq,
    lq,
    quotas,
    run_scenario,
    snapshot,
    usage,
    wl,
)

# --- NoAdmissionFairSharing ---------------------------------------------------------------------


def test_without_fair_sharing_priority_then_timestamp_then_name_decide():
    s = snapshot(
        [cq("cq", cpu=3)],
        [lq("a/q", "cq"), lq("b/q", "cq")],
        [
            wl("late-high", "b/q", priority=5, t=9),
            wl("early", "a/q", t=1),
            wl("b-tie", "b/q", t=2),
            wl("a-tie", "a/q", t=2),
            wl("later", "a/q", t=3),
        ],
        usage=usage(**{"a/q": 100, "b/q": 0}),  # usage does not matter in this mode
    )
    assert admitted(plan(s, 0)) == ["late-high", "early", "a-tie"]


# --- UsageBasedAdmissionFairSharing --------------------------------------------------------------


def afs_queue(cpu: int = 1, **kwargs) -> list:
    return [cq("cq", cpu=cpu, mode=USAGE_BASED, **kwargs)]


def test_the_queue_with_lower_decayed_usage_goes_first():
    s = snapshot(
        afs_queue(),
        [lq("a/q", "cq"), lq("b/q", "cq")],
        [wl("a1", "a/q", t=0), wl("b1", "b/q", t=5)],
        usage=usage(**{"a/q": 3, "b/q": 1}),
    )
    assert admitted(plan(s, 0)) == ["b1"]


def test_a_higher_weight_divides_the_usage():
    s = snapshot(
        afs_queue(),
        [lq("a/q", "cq", weight=4), lq("b/q", "cq")],
        [wl("a1", "a/q", t=5), wl("b1", "b/q", t=0)],
        usage=usage(**{"a/q": 3, "b/q": 1}),
    )
    assert admitted(plan(s, 0)) == ["a1"]  # 3 / 4 < 1 / 1


def test_a_queue_of_weight_zero_is_never_ahead_even_with_no_usage():
    s = snapshot(
        afs_queue(),
        [lq("a/q", "cq", weight=0), lq("b/q", "cq")],
        [wl("a1", "a/q", t=0), wl("b1", "b/q", t=5)],
        usage=usage(**{"b/q": 50}),
    )
    assert admitted(plan(s, 0)) == ["b1"]


def test_a_queue_of_weight_zero_still_gets_what_nobody_else_wants():
    s = snapshot(
        afs_queue(cpu=2), [lq("a/q", "cq", weight=0), lq("b/q", "cq")], [wl("a1", "a/q", t=0), wl("b1", "b/q", t=5)]
    )
    assert admitted(plan(s, 0)) == ["b1", "a1"]


def test_resource_weights_change_the_order():
    queues = afs_queue()
    locals_ = [lq("cpu/q", "cq"), lq("gpu/q", "cq")]
    work = [wl("c1", "cpu/q", t=0), wl("g1", "gpu/q", t=5)]
    states = {
        node_id("localQueue", "cpu/q"): UsageState({"cpu": 4000.0}),
        node_id("localQueue", "gpu/q"): UsageState({"nvidia.com/gpu": 1000.0}),
    }
    default = snapshot(queues, locals_, work, usage=states)
    assert admitted(plan(default, 0)) == ["g1"]  # 1 GPU (1000) < 4 CPU (4000)
    gpu_heavy = snapshot(
        queues, locals_, work, usage=states, policy=FairSharingPolicy(resource_weights={"nvidia.com/gpu": 10.0})
    )
    assert admitted(plan(gpu_heavy, 0)) == ["c1"]  # 10 x 1000 > 4000


def test_priority_only_breaks_ties_within_a_queues_turn():
    s = snapshot(
        afs_queue(cpu=2),
        [lq("low/q", "cq"), lq("high/q", "cq")],
        [
            wl("urgent", "high/q", priority=100, t=0),
            wl("l-normal", "low/q", priority=0, t=0),
            wl("l-important", "low/q", priority=50, t=9),
        ],
        usage=usage(**{"low/q": 0, "high/q": 5}),
    )
    # the low-usage queue's turn comes first; inside it the higher priority goes first
    assert admitted(plan(s, 0)) == ["l-important", "l-normal"]


def test_equal_scores_fall_back_to_priority_then_timestamp():
    s = snapshot(
        afs_queue(cpu=1),
        [lq("a/q", "cq"), lq("b/q", "cq")],
        [wl("a1", "a/q", priority=0, t=0), wl("b1", "b/q", priority=1, t=5)],
    )
    assert admitted(plan(s, 0)) == ["b1"]


def test_kep4136_entry_penalty_story_gives_one_job_to_each_queue():
    result = run_scenario("kep4136_entry_penalty.yaml")
    assert admitted_per_queue(result) == {"tenant-a/main": 1, "tenant-b/main": 1}
    assert result["workloads"]["a-1"]["state"] == "Admitted"
    assert result["workloads"]["b-1"]["state"] == "Admitted"


def test_without_the_entry_penalty_the_first_queue_would_take_both_slots():
    s = snapshot(
        afs_queue(cpu=2),
        [lq("a/q", "cq"), lq("b/q", "cq")],
        [wl("a1", "a/q", t=-40), wl("a2", "a/q", t=-30), wl("b1", "b/q", t=-20), wl("b2", "b/q", t=-10)],
        usage=usage(**{"a/q": 0.1, "b/q": 0.1}),
    )
    assert admitted(plan(s, 0, entry_penalty=False)) == ["a1", "a2"]
    with_penalty = plan(s, 0)
    assert admitted(with_penalty) == ["a1", "b1"]
    alpha_s = FairSharingPolicy().sampling_alpha
    assert with_penalty.admissions[0].penalty["cpu"] == pytest.approx(alpha_s * CPU)


def test_namespaces_are_chosen_first_then_local_queues_within_them():
    # team-x has two queues; team-y one. Namespace scores: x = (1 + 1) / 1 = 2, y = 3 / 2 = 1.5
    s = snapshot(
        afs_queue(cpu=1),
        [lq("team-x/a", "cq"), lq("team-x/b", "cq"), lq("team-y/a", "cq")],
        [wl("xa", "team-x/a", t=0), wl("xb", "team-x/b", t=0), wl("ya", "team-y/a", t=9)],
        namespaces=[Namespace("team-x", 1.0), Namespace("team-y", 2.0)],
        usage=usage(**{"team-x/a": 1, "team-x/b": 1, "team-y/a": 3}),
    )
    assert admitted(plan(s, 0)) == ["ya"]


def test_with_one_local_queue_per_namespace_the_order_is_usage_over_both_weights():
    s = snapshot(
        afs_queue(cpu=1),
        [lq("n1/q", "cq", weight=2), lq("n2/q", "cq", weight=1)],
        [wl("one", "n1/q", t=9), wl("two", "n2/q", t=0)],
        namespaces=[Namespace("n1", 2.0), Namespace("n2", 1.0)],
        usage=usage(**{"n1/q": 3.5, "n2/q": 1}),
    )
    assert admitted(plan(s, 0)) == ["one"]  # 3.5 / (2 x 2) = 0.875 < 1 / (1 x 1)


def test_every_admission_re_ranks_the_queues():
    # one admission's penalty is alpha_s x 1 CPU = 56m; b starts 60m ahead of a in usage
    s = snapshot(
        afs_queue(cpu=6),
        [lq("a/q", "cq"), lq("b/q", "cq")],
        [*(wl(f"a{i}", "a/q", t=i) for i in range(4)), *(wl(f"b{i}", "b/q", t=10 + i) for i in range(4))],
        usage=usage(**{"a/q": 0, "b/q": 0.06}),
    )
    # a: 0 -> 56 (still below 60) -> 112; then the lower score alternates: b 116, a 168, b 172, a
    assert admitted(plan(s, 0)) == ["a0", "a1", "b0", "a2", "b1", "a3"]


# --- cohort scope ------------------------------------------------------------------------------


def test_at_cohort_scope_work_within_nominal_goes_first_and_borrowers_by_queue_score():
    cohort = Cohort("org", admission_mode=USAGE_BASED)
    s = snapshot(
        [cq("cq-a", cpu=2, cohort="org"), cq("cq-b", cpu=2, cohort="org"), cq("cq-c", cpu=0, cohort="org")],
        [lq("a/q", "cq-a"), lq("b/q", "cq-b"), lq("c/q", "cq-c")],
        [wl("a-big", "a/q", cpu=3, t=0), wl("b-fits", "b/q", cpu=2, t=9), wl("c-borrow", "c/q", cpu=1, t=1)],
        cohorts=[cohort],
        usage={
            node_id("clusterQueue", "cq-a"): UsageState({"cpu": 5000.0}),
            node_id("clusterQueue", "cq-c"): UsageState({"cpu": 1000.0}),
        },
    )
    # b-fits is within cq-b's nominal: first although it is the newest; then the borrowers by
    # ClusterQueue score: cq-c (1) before cq-a (5), and a-big no longer fits
    result = plan(s, 0)
    assert admitted(result) == ["b-fits", "c-borrow"]
    assert result.admissions[1].borrowing is True


def test_the_highest_scope_on_the_path_wins():
    cohort = Cohort("org", admission_mode=NO_FAIR_SHARING)
    s = snapshot(
        [cq("cq", cpu=1, cohort="org", mode=USAGE_BASED)],
        [lq("a/q", "cq"), lq("b/q", "cq")],
        [wl("a1", "a/q", t=0), wl("b1", "b/q", t=5)],
        cohorts=[cohort],
        usage=usage(**{"a/q": 9}),
    )
    assert admitted(plan(s, 0)) == ["a1"]  # the cohort says no fair sharing: the oldest goes first


# --- DominantResourceShare ---------------------------------------------------------------------


def test_dominant_share_orders_by_the_largest_allocated_fraction_over_weight():
    s = snapshot(
        [cq("cq", mode=DOMINANT_RESOURCE_SHARE, flavors=quotas(cpu=10, memory=10))],
        [lq("a/q", "cq"), lq("b/q", "cq")],
        [
            wl("a-run", "a/q", cpu=1, memory=6, admitted=True, cluster_queue="cq"),
            wl("b-run", "b/q", cpu=5, memory=0, admitted=True, cluster_queue="cq"),
            wl("a-next", "a/q", cpu=1, t=0),
            wl("b-next", "b/q", cpu=1, t=5),
        ],
    )
    assert admitted(plan(s, 0))[0] == "b-next"  # b: 0.5 < a: 0.6 (memory)


def test_kep752_dominant_share_order():
    result = run_scenario("kep752_dominant_share.yaml")
    order = [e["workload"] for e in result["events"] if e["type"] == "admitted" and e["t"] == 1]
    assert order == ["next-w", "next-b", "next-g", "next-c"]


def test_classic_drf_example_gives_three_and_two_tasks():
    result = run_scenario("drf_classic.yaml")
    assert admitted_per_queue(result) == {"user-a/tasks": 3, "user-b/tasks": 2}


@pytest.mark.parametrize(
    "name, expected",
    [
        ("volcano_table1.yaml", {"ns1/jobs": 4, "ns2/jobs": 4, "ns3/jobs": 6, "ns4/jobs": 2}),
        ("volcano_table2.yaml", {"ns1/jobs": 3, "ns2/jobs": 1, "ns3/jobs": 10, "ns4/jobs": 2}),
        ("volcano_table3.yaml", {"ns1/jobs": 3, "ns2/jobs": 9}),
    ],
)
def test_volcano_16_cpu_tables(name, expected):
    result = run_scenario(name)
    assert admitted_per_queue(result) == expected


def test_volcano_queue_totals_follow_queue_weights():
    table1 = admitted_per_queue(run_scenario("volcano_table1.yaml"))
    table2 = admitted_per_queue(run_scenario("volcano_table2.yaml"))
    assert table1["ns1/jobs"] + table1["ns2/jobs"] == 8 and table1["ns3/jobs"] + table1["ns4/jobs"] == 8
    assert table2["ns1/jobs"] + table2["ns2/jobs"] == 4 and table2["ns3/jobs"] + table2["ns4/jobs"] == 12


def test_volcano_table3_keeps_q1s_share_free_for_q1():
    result = run_scenario("volcano_table3.yaml")
    pending = [w for w in result["workloads"].values() if w["state"] == "Pending"]
    assert pending and all(w["pendingReason"]["code"] == "InsufficientQuota" for w in pending)
    assert all("ClusterQueue q2" in w["pendingReason"]["message"] for w in pending)


@pytest.mark.parametrize(
    ("history", "first"),
    [
        ({"heavy/main": {"cpu": 0.6}, "light/main": {"cpu": 0.0}}, "light/job"),
        ({"heavy/main": {"cpu": 0.0}, "light/main": {"cpu": 0.0}}, "heavy/job"),  # no history: timestamp
        ({}, "heavy/job"),
    ],
)
def test_time_aware_orders_idle_queues_by_windowed_usage_then_timestamp(history, first):
    """Both queues idle: ``allocated / fair share`` is 0 for both, so the queue that used less
    over the window goes first (it went by timestamp alone, whatever the history)."""
    state = snapshot(
        [cq("pool", cpu=4, mode="TimeAware")],
        [lq("heavy/main", "pool"), lq("light/main", "pool")],
        [wl("heavy/job", "heavy/main", cpu=4, t=0.0), wl("light/job", "light/main", cpu=4, t=10.0)],
        historical=history,
    )
    assert admitted(plan(state, now=20.0)) == [first]
