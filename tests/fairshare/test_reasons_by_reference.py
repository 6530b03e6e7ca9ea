"""``plan(..., explain_first=N)``: the first N waiting workloads of a ClusterQueue explained one by
one, the later quota-waiting ones by reference to the queue's head; decisions and positions as
with every workload explained."""

from __future__ import annotations

import random

import pytest

from fairshare.admission import reasons as text
from fairshare.admission.planner import plan
from fairshare.types import (
    BLOCKED_BY_STRICT_FIFO_HEAD,
    INSUFFICIENT_QUOTA,
    NAMESPACE_QUOTA_EXCEEDED,
    QUEUE_STOPPED,
    WAITING_FOR_FAIR_SHARE,
    Namespace,
)
from tests.fairshare.builders import cq, lq, snapshot, usage, wl

QUOTA = {INSUFFICIENT_QUOTA, WAITING_FOR_FAIR_SHARE}


def busy(seed: int):
    """Two ClusterQueues (one StrictFIFO), four LocalQueues (one stopped), a namespace quota,
    and far more waiting work than fits."""
    rng = random.Random(seed)
    queues = [cq("best", 10, mode="UsageBasedAdmissionFairSharing"), cq("strict", 6, strategy="StrictFIFO")]
    local = [
        lq("a/main", "best"),
        lq("b/main", "best", weight=2),
        lq("c/main", "best", stop="Hold"),
        lq("d/main", "strict"),
    ]
    work = [
        wl(f"{q.key.split('/')[0]}/w{i}", q.key, cpu=rng.choice([1, 2, 3]), t=float(i), priority=rng.choice([0, 0, 5]))
        for i in range(120)
        for q in [rng.choice(local)]
    ]
    return snapshot(
        queues,
        local,
        work,
        namespaces=[Namespace("b", quota={"cpu": 4000})],
        usage=usage(**{"a/main": 3, "b/main": 1}),
    )


def test_given_explain_first_then_decisions_positions_and_the_first_reasons_are_those_of_a_full_plan():
    state = busy(1)
    full = plan(state, 100.0)
    short = plan(state, 100.0, explain_first=5)

    assert short.admissions == full.admissions and short.evictions == full.evictions
    assert [(r.workload, r.cluster_queue, r.position) for r in short.pending] == [
        (r.workload, r.cluster_queue, r.position) for r in full.pending
    ]
    for before, after in zip(full.pending, short.pending):
        if before.position <= 5 or before.code not in QUOTA:
            assert (after.code, after.message) == (before.code, before.message)


def test_given_explain_first_then_later_quota_reasons_refer_to_the_queues_head_with_a_stable_code():
    state = busy(2)
    full = plan(state, 100.0)
    short = plan(state, 100.0, explain_first=5)

    head = next(r for r in full.pending if r.cluster_queue == "best" and r.code in QUOTA)
    shared = text.waiting_behind("best", 5, head.workload, head.message)
    assert short.by_reference["best"] == shared
    referred = [
        (before, after)
        for before, after in zip(full.pending, short.pending)
        if after.cluster_queue == "best" and after.message == shared
    ]
    assert len(referred) > 20
    for before, after in referred:
        assert before.position > 5 and before.code in QUOTA and before.workload != head.workload
        # WaitingForFairShare names who was admitted first: that changes from pass to pass
        assert after.code == INSUFFICIENT_QUOTA
    assert WAITING_FOR_FAIR_SHARE in {before.code for before, _ in referred}


def test_given_held_blocked_or_namespace_bound_workloads_after_the_first_then_they_keep_their_own_sentence():
    state = busy(3)
    full = plan(state, 100.0)
    short = plan(state, 100.0, explain_first=3)

    kept = (QUEUE_STOPPED, BLOCKED_BY_STRICT_FIFO_HEAD, NAMESPACE_QUOTA_EXCEEDED)
    fixed = [(b, a) for b, a in zip(full.pending, short.pending) if b.code in kept and b.position > 3]
    assert {b.code for b, _ in fixed} == set(kept)
    assert all((a.code, a.message) == (b.code, b.message) for b, a in fixed)


def test_given_fewer_waiting_than_explain_first_then_the_plan_is_the_full_one():
    state = busy(4)
    assert plan(state, 100.0, explain_first=10_000) == plan(state, 100.0)


def test_given_no_explain_first_then_nothing_is_by_reference():
    assert plan(busy(5), 100.0).by_reference == {}


def test_given_explain_first_below_one_then_it_is_refused():
    with pytest.raises(ValueError, match="explain_first"):
        plan(busy(6), 100.0, explain_first=0)
