"""Preemption, opt-in per ClusterQueue: within the queue, reclaim within the cohort, TimeAware."""

from __future__ import annotations

import itertools

from fairshare.admission.planner import plan
from fairshare.preemption.preemption import Running, find_victims
from fairshare.types import PREEMPTED, TIME_AWARE, USAGE_BASED, Cohort
from tests.fairshare.builders import admitted, cq, lq, quotas, run_scenario, snapshot, usage, wl


def evicted(result) -> list[str]:
    return [e.workload for e in result.evictions]


def test_without_opting_in_nothing_is_preempted():
    s = snapshot(
        [cq("cq", cpu=2)],
        [lq("a/q", "cq")],
        [wl("low", "a/q", cpu=2, priority=0, admitted=True, cluster_queue="cq"), wl("high", "a/q", cpu=2, priority=9)],
    )
    result = plan(s, 0)
    assert evicted(result) == [] and admitted(result) == []


def test_lower_priority_preemption_evicts_a_lower_priority_workload_for_a_higher_one():
    s = snapshot(
        [cq("cq", cpu=2, within="LowerPriority")],
        [lq("a/q", "cq")],
        [wl("low", "a/q", cpu=2, priority=0, admitted=True, cluster_queue="cq"), wl("high", "a/q", cpu=2, priority=9)],
    )
    result = plan(s, 0)
    assert evicted(result) == ["low"] and admitted(result) == ["high"]
    eviction = result.evictions[0]
    assert (eviction.code, eviction.preemptor) == (PREEMPTED, "high")
    assert eviction.message == "preempted by high to make room in ClusterQueue cq"


def test_equal_priority_is_not_preempted_under_lower_priority():
    s = snapshot(
        [cq("cq", cpu=2, within="LowerPriority")],
        [lq("a/q", "cq")],
        [wl("old", "a/q", cpu=2, priority=5, admitted=True, cluster_queue="cq"), wl("new", "a/q", cpu=2, priority=5)],
    )
    assert evicted(plan(s, 0)) == []


def test_lower_or_newer_equal_priority_may_preempt_a_newer_equal_priority_workload():
    s = snapshot(
        [cq("cq", cpu=2, within="LowerOrNewerEqualPriority")],
        [lq("a/q", "cq")],
        [
            wl("newer", "a/q", cpu=2, priority=5, t=10, admitted=True, cluster_queue="cq"),
            wl("older", "a/q", cpu=2, priority=5, t=1),
        ],
    )
    assert evicted(plan(s, 0)) == ["newer"]
    s2 = snapshot(
        [cq("cq", cpu=2, within="LowerOrNewerEqualPriority")],
        [lq("a/q", "cq")],
        [
            wl("older", "a/q", cpu=2, priority=5, t=1, admitted=True, cluster_queue="cq"),
            wl("newer", "a/q", cpu=2, priority=5, t=10),
        ],
    )
    assert evicted(plan(s2, 0)) == []


def test_victims_in_a_queue_lose_by_local_queue_score_first():
    s = snapshot(
        [cq("cq", cpu=2, within="LowerPriority", mode=USAGE_BASED)],
        [lq("light/q", "cq"), lq("heavy/q", "cq"), lq("p/q", "cq")],
        [
            wl("light-run", "light/q", priority=0, admitted=True, cluster_queue="cq", admitted_at=1),
            wl("heavy-run", "heavy/q", priority=0, admitted=True, cluster_queue="cq", admitted_at=0),
            wl("boss", "p/q", priority=9),
        ],
        usage=usage(**{"light/q": 1, "heavy/q": 8, "p/q": 0}),
    )
    assert evicted(plan(s, 0)) == ["heavy-run"]  # higher usage score loses although admitted earlier


def test_victims_with_equal_scores_lose_by_lower_priority_then_most_recent_admission():
    running = [
        wl("p1-old", "a/q", priority=1, admitted=True, cluster_queue="cq", admitted_at=0),
        wl("p0-old", "a/q", priority=0, admitted=True, cluster_queue="cq", admitted_at=0),
        wl("p0-new", "a/q", priority=0, admitted=True, cluster_queue="cq", admitted_at=5),
    ]
    s = snapshot(
        [cq("cq", cpu=3, within="LowerPriority")], [lq("a/q", "cq")], [*running, wl("boss", "a/q", priority=9)]
    )
    assert evicted(plan(s, 0)) == ["p0-new"]
    s2 = snapshot(
        [cq("cq", cpu=3, within="LowerPriority")], [lq("a/q", "cq")], [*running, wl("boss", "a/q", cpu=2, priority=9)]
    )
    assert evicted(plan(s2, 0)) == ["p0-new", "p0-old"]


def test_only_the_minimal_set_is_evicted():
    # candidates in order: 1 CPU (newest), then 3 CPU. Needing 3, the 1-CPU one turns out unneeded.
    s = snapshot(
        [cq("cq", cpu=4, within="LowerPriority")],
        [lq("a/q", "cq")],
        [
            wl("three", "a/q", cpu=3, admitted=True, cluster_queue="cq", admitted_at=0),
            wl("one", "a/q", cpu=1, admitted=True, cluster_queue="cq", admitted_at=5),
            wl("boss", "a/q", cpu=3, priority=9),
        ],
    )
    result = plan(s, 0)
    assert evicted(result) == ["three"] and admitted(result) == ["boss"]


def test_nobody_is_evicted_for_a_workload_that_still_would_not_fit():
    s = snapshot(
        [cq("cq", cpu=4, within="LowerPriority")],
        [lq("a/q", "cq")],
        [
            wl("low", "a/q", cpu=2, admitted=True, cluster_queue="cq"),
            wl("peer", "a/q", cpu=2, priority=9, admitted=True, cluster_queue="cq"),
            wl("boss", "a/q", cpu=3, priority=9),
        ],
    )
    result = plan(s, 0)
    assert evicted(result) == [] and admitted(result) == []


def test_find_victims_restores_everything_when_no_set_works():
    state = {"free": 0}
    items = [Running(wl(f"v{i}", "a/q"), "a/q", "a", "cq", {}, 0.0) for i in range(3)]

    def release(item):
        state["free"] += 1

    def restore(item):
        state["free"] -= 1

    assert find_victims(items, lambda: "ok" if state["free"] >= 5 else None, release, restore) is None
    assert state["free"] == 0


# --- reclaim within the cohort ------------------------------------------------------------------


def cohort_queues(reclaim: str = "Any") -> list:
    return [cq("lender", cpu=4, cohort="org", reclaim=reclaim), cq("borrower", cpu=0, cohort="org")]


def test_a_queue_under_its_nominal_quota_reclaims_from_a_borrowing_queue():
    s = snapshot(
        cohort_queues(),
        [lq("l/q", "lender"), lq("b/q", "borrower")],
        [wl("borrowed", "b/q", cpu=4, priority=100, admitted=True, cluster_queue="borrower"), wl("mine", "l/q", cpu=2)],
    )
    result = plan(s, 0)
    assert evicted(result) == ["borrowed"] and admitted(result) == ["mine"]
    assert result.evictions[0].message == "preempted by mine to reclaim the nominal quota of ClusterQueue lender"


def test_reclaim_with_lower_priority_spares_higher_priority_borrowers():
    s = snapshot(
        cohort_queues("LowerPriority"),
        [lq("l/q", "lender"), lq("b/q", "borrower")],
        [wl("borrowed", "b/q", cpu=4, priority=100, admitted=True, cluster_queue="borrower"), wl("mine", "l/q", cpu=2)],
    )
    assert evicted(plan(s, 0)) == []


def test_reclaim_never_goes_beyond_the_reclaimers_nominal_quota():
    s = snapshot(
        cohort_queues(),
        [lq("l/q", "lender"), lq("b/q", "borrower")],
        [wl("borrowed", "b/q", cpu=4, admitted=True, cluster_queue="borrower"), wl("greedy", "l/q", cpu=5)],
    )
    assert evicted(plan(s, 0)) == []


def test_reclaim_does_not_touch_queues_that_are_not_borrowing():
    queues = [cq("lender", cpu=4, cohort="org", reclaim="Any"), cq("other", cpu=4, cohort="org")]
    s = snapshot(
        queues,
        [lq("l/q", "lender"), lq("o/q", "other")],
        [
            wl("other-own", "o/q", cpu=4, admitted=True, cluster_queue="other"),
            wl("lender-own", "l/q", cpu=4, admitted=True, cluster_queue="lender"),
            wl("more", "l/q", cpu=1),
        ],
    )
    assert evicted(plan(s, 0)) == []


# --- TimeAware reclaim --------------------------------------------------------------------------


def time_aware_snapshot(history: dict, within: str = "Never", reclaim: str = "Any"):
    cohort = Cohort("cluster", admission_mode=TIME_AWARE, quotas=quotas(gpu=16))
    queues = [
        cq("qa", cohort="cluster", reclaim=reclaim, within=within, flavors=quotas(gpu=0)),
        cq("qb", cohort="cluster", reclaim=reclaim, within=within, flavors=quotas(gpu=0)),
    ]
    return snapshot(
        queues,
        [lq("a/q", "qa"), lq("b/q", "qb")],
        [wl("a-run", "a/q", cpu=0, gpu=16, admitted=True, cluster_queue="qa"), wl("b-next", "b/q", cpu=0, gpu=16)],
        cohorts=[cohort],
        historical=history,
    )


def test_a_starved_queue_reclaims_when_its_allocation_plus_the_job_stays_within_its_fair_share():
    # a used the whole cluster over the window: its fair share drops to 0 and b's rises to 16
    result = plan(time_aware_snapshot({"a/q": {"gpu": 1.0}}), 0)
    assert evicted(result) == ["a-run"] and admitted(result) == ["b-next"]
    assert "fair share (TimeAware)" in result.evictions[0].message
    assert result.fair_shares["clusterQueue:qb"]["gpu"] == 16000


def test_no_time_aware_reclaim_while_the_job_would_exceed_the_fair_share():
    result = plan(time_aware_snapshot({"a/q": {"gpu": 0.5}, "b/q": {"gpu": 0.5}}), 0)
    assert evicted(result) == []
    assert result.fair_shares["clusterQueue:qb"]["gpu"] == 8000


def test_no_time_aware_reclaim_without_opting_in():
    result = plan(time_aware_snapshot({"a/q": {"gpu": 1.0}}, reclaim="Never"), 0)
    assert evicted(result) == []


def test_kai_two_queue_story_alternates_with_k_one():
    result = run_scenario("kai_two_queues.yaml")
    admissions = [e for e in result["events"] if e["type"] == "admitted"]
    queues_in_turn = [e["localQueue"] for e in admissions]
    switches = sum(1 for x, y in itertools.pairwise(queues_in_turn) if x != y)
    assert switches >= 4
    assert {"team-a/train", "team-b/train"} == set(queues_in_turn)
    assert any(e["type"] == "preempted" for e in result["events"])


def test_kai_two_queue_story_never_alternates_with_k_zero():
    result = run_scenario("kai_two_queues.yaml", "policy.kValue=0")
    admissions = [e for e in result["events"] if e["type"] == "admitted"]
    assert [e["localQueue"] for e in admissions] == ["team-a/train"]
    assert not any(e["type"] == "preempted" for e in result["events"])
    assert result["series"]["fairShare"]["team-a/train"]["nvidia.com/gpu"][-1] == 8
