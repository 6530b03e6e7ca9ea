"""Properties of any admission pass, checked on generated clusters (hypothesis)."""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairshare.admission.planner import plan
from fairshare.quota.quota import QuotaTree, flavor_amounts
from fairshare.types import (
    ADMISSION_MODES,
    ClusterQueue,
    Cohort,
    FlavorQuotas,
    LocalQueue,
    Namespace,
    Preemption,
    ResourceQuota,
    Snapshot,
    UsageState,
    Workload,
    node_id,
)

FLAVORS = ("on-demand", "spot")
PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def clusters(draw, *, preemption: bool = False, strategies=("BestEffortFIFO", "StrictFIFO")) -> Snapshot:
    """A flat cohort (or none) of ClusterQueues with limits, namespaces with quotas, and pending work."""
    use_cohort = draw(st.booleans())
    cohort_mode = draw(st.sampled_from((None, *ADMISSION_MODES))) if use_cohort else None
    cohorts = ()
    if use_cohort:
        own = draw(st.integers(0, 6))
        cohorts = (
            Cohort(
                "org",
                None,
                draw(st.sampled_from((0.0, 1.0, 2.0))),
                cohort_mode,
                (FlavorQuotas("on-demand", {"cpu": ResourceQuota(own * 1000)}),),
            ),
        )
    queues = []
    for index in range(draw(st.integers(1, 3))):
        flavors = []
        for flavor in FLAVORS[: draw(st.integers(1, 2))]:
            nominal = draw(st.integers(0, 6)) * 1000
            borrowing = lending = None
            if use_cohort and draw(st.booleans()):
                borrowing = draw(st.integers(0, 4)) * 1000
            if use_cohort and draw(st.booleans()):
                lending = draw(st.integers(0, nominal // 1000)) * 1000
            memory = ResourceQuota(draw(st.integers(0, 16)) * 1000)
            flavors.append(FlavorQuotas(flavor, {"cpu": ResourceQuota(nominal, borrowing, lending), "memory": memory}))
        within = (
            draw(st.sampled_from(("Never", "LowerPriority", "LowerOrNewerEqualPriority"))) if preemption else "Never"
        )
        reclaim = draw(st.sampled_from(("Never", "LowerPriority", "Any"))) if preemption and use_cohort else "Never"
        mode = draw(st.sampled_from((None, *ADMISSION_MODES)))
        queues.append(
            ClusterQueue(
                f"cq-{index}",
                "org" if use_cohort else None,
                draw(st.sampled_from((0.0, 1.0, 3.0))),
                draw(st.sampled_from(strategies)),
                mode,
                tuple(flavors),
                Preemption(within, reclaim),
            )
        )
    namespaces = []
    for index in range(draw(st.integers(1, 3))):
        quota = {"cpu": draw(st.integers(1, 8)) * 1000} if draw(st.booleans()) else {}
        namespaces.append(Namespace(f"ns-{index}", draw(st.sampled_from((0.5, 1.0, 2.0))), quota))
    local_queues = []
    for index in range(draw(st.integers(1, 4))):
        namespace = draw(st.sampled_from(namespaces)).name
        queue = draw(st.sampled_from(queues)).name
        local_queues.append(
            LocalQueue(f"{namespace}/lq-{index}", namespace, queue, draw(st.sampled_from((0.0, 1.0, 2.0))))
        )
    workloads = []
    for index in range(draw(st.integers(0, 16))):
        local = draw(st.sampled_from(local_queues))
        requests = {"cpu": draw(st.integers(1, 4)) * 500}
        if draw(st.booleans()):
            requests["memory"] = draw(st.integers(1, 6)) * 1000
        workloads.append(
            Workload(f"w-{index:02d}", local.key, requests, draw(st.integers(0, 2)), float(draw(st.integers(0, 5))))
        )
    states = {
        node_id("localQueue", lq.key): UsageState({"cpu": float(draw(st.integers(0, 4000)))}) for lq in local_queues
    }
    history = {lq.key: {"cpu": draw(st.floats(0, 1))} for lq in local_queues}
    return Snapshot(
        flavors=FLAVORS,
        cohorts=cohorts,
        cluster_queues=tuple(queues),
        namespaces=tuple(namespaces),
        local_queues=tuple(local_queues),
        workloads=tuple(workloads),
        usage=states,
        historical_usage=history,
    )


def apply(snapshot: Snapshot, decided, now: float = 0.0) -> Snapshot:
    """The snapshot after a plan's evictions and admissions."""
    evicted = {e.workload for e in decided.evictions}
    admissions = {a.workload: a for a in decided.admissions}
    workloads = []
    for w in snapshot.workloads:
        if w.key in evicted:
            w = replace(w, admitted=False, admitted_at=None, cluster_queue=None, assignment={})
        if w.key in admissions:
            a = admissions[w.key]
            w = replace(w, admitted=True, admitted_at=now, cluster_queue=a.cluster_queue, assignment=dict(a.assignment))
        workloads.append(w)
    return replace(snapshot, workloads=tuple(workloads))


def usage_by_queue(snapshot: Snapshot) -> dict[str, dict[tuple[str, str], int]]:
    usage: dict[str, dict[tuple[str, str], int]] = {q.name: {} for q in snapshot.cluster_queues}
    for w in snapshot.workloads:
        if w.admitted:
            for fr, amount in flavor_amounts(w.requests, w.assignment).items():
                usage[w.cluster_queue][fr] = usage[w.cluster_queue].get(fr, 0) + amount
    return usage


def check_quotas(snapshot: Snapshot) -> None:
    """Independent of the planner's tree: every limit holds for the admitted workloads."""
    usage = usage_by_queue(snapshot)
    frs = {(f.flavor, r) for q in snapshot.cluster_queues for f in q.quotas for r in f.resources}
    frs |= {(f.flavor, r) for c in snapshot.cohorts for f in c.quotas for r in f.resources}
    for fr in frs:
        total_capacity = 0
        occupied = 0
        for queue in snapshot.cluster_queues:
            quota = next((f.resources.get(fr[1]) for f in queue.quotas if f.flavor == fr[0]), None)
            nominal = quota.nominal if quota else 0
            used = usage[queue.name].get(fr, 0)
            if queue.cohort is None:
                assert used <= nominal, (queue.name, fr)
                continue
            total_capacity += nominal
            if quota is not None and quota.borrowing_limit is not None:
                assert used <= nominal + quota.borrowing_limit, (queue.name, fr)
            guaranteed = nominal - quota.lending_limit if quota is not None and quota.lending_limit is not None else 0
            occupied += max(used, guaranteed)  # a queue's guaranteed part is never lent out
        for cohort in snapshot.cohorts:
            total_capacity += sum(
                f.resources[fr[1]].nominal for f in cohort.quotas if f.flavor == fr[0] and fr[1] in f.resources
            )
        if any(q.cohort for q in snapshot.cluster_queues):
            assert occupied <= total_capacity, fr
    tree = QuotaTree(snapshot.cohorts, snapshot.cluster_queues)  # and a fresh quota tree agrees
    for name, amounts in usage.items():
        tree.add(name, amounts)
    for queue in snapshot.cluster_queues:
        for fr in frs:
            assert tree.available(queue.name, fr) >= 0, (queue.name, fr)


def check_namespaces(snapshot: Snapshot) -> None:
    for namespace in snapshot.namespaces:
        members = {lq.key for lq in snapshot.local_queues if lq.namespace == namespace.name}
        for resource, limit in namespace.quota.items():
            used = sum(
                w.requests.get(resource, 0) for w in snapshot.workloads if w.admitted and w.local_queue in members
            )
            assert used <= limit, (namespace.name, resource)


@PROPERTY_SETTINGS
@given(clusters(preemption=True))
def test_admitted_work_never_exceeds_any_quota_or_limit(snapshot):
    state = snapshot
    for step in range(3):  # admit, then admit again on the result (running work plus new decisions)
        state = apply(state, plan(state, float(step)), float(step))
        check_quotas(state)


@PROPERTY_SETTINGS
@given(clusters(preemption=True))
def test_namespace_quota_is_respected(snapshot):
    state = snapshot
    for step in range(2):
        state = apply(state, plan(state, float(step)), float(step))
        check_namespaces(state)


@PROPERTY_SETTINGS
@given(clusters(strategies=("BestEffortFIFO",)))
def test_with_best_effort_fifo_and_no_holds_no_pending_workload_would_fit_after_a_pass(snapshot):
    state = apply(snapshot, plan(snapshot, 0.0))
    tree = QuotaTree(state.cohorts, state.cluster_queues)
    for name, amounts in usage_by_queue(state).items():
        tree.add(name, amounts)
    locals_ = {lq.key: lq for lq in state.local_queues}
    namespaces = {n.name: n for n in state.namespaces}
    ns_used: dict[str, dict[str, int]] = {}
    for w in state.workloads:
        if w.admitted:
            per = ns_used.setdefault(locals_[w.local_queue].namespace, {})
            for r, a in w.requests.items():
                per[r] = per.get(r, 0) + a
    for w in state.workloads:
        if w.admitted:
            continue
        local = locals_[w.local_queue]
        quota = namespaces[local.namespace].quota
        used = ns_used.get(local.namespace, {})
        namespace_blocks = any(used.get(r, 0) + a > quota[r] for r, a in w.requests.items() if r in quota)
        assignment, _ = tree.assign(local.cluster_queue, w.requests)
        assert assignment is None or namespace_blocks, w.key


@PROPERTY_SETTINGS
@given(clusters(preemption=True), st.randoms(use_true_random=False))
def test_same_input_gives_the_same_output_whatever_the_input_order(snapshot, rng: random.Random):
    first = plan(snapshot, 0.0)
    assert plan(snapshot, 0.0) == first
    shuffled = list(snapshot.workloads)
    rng.shuffle(shuffled)
    other = plan(replace(snapshot, workloads=tuple(shuffled)), 0.0)
    assert other.admissions == first.admissions
    assert other.pending == first.pending
    assert sorted(other.evictions, key=lambda e: e.workload) == sorted(first.evictions, key=lambda e: e.workload)


@PROPERTY_SETTINGS
@given(clusters(preemption=True), st.floats(0.0, 1e9), st.sampled_from((None, 1, 2)))
def test_the_plan_depends_on_the_snapshot_alone_not_on_now(snapshot, later: float, explain_first):
    """``now`` is only recorded in ``Plan.now``: the admission pass reuses the plan of an equal
    snapshot re-dated (``queues.admission.passes._planned``), so no decision may read the clock."""
    state = apply(snapshot, plan(snapshot, 0.0), now=3.0)  # admitted work with admission times
    first = plan(state, 5.0, explain_first=explain_first)
    again = plan(state, 5.0 + later, explain_first=explain_first)
    assert again.now == 5.0 + later
    assert replace(again, now=first.now) == first


@PROPERTY_SETTINGS
@given(clusters(preemption=True))
def test_skipping_reasons_does_not_change_the_decisions(snapshot):
    state = apply(snapshot, plan(snapshot, 0.0))
    more = replace(
        state,
        workloads=state.workloads
        + tuple(
            Workload(f"late-{i}", lq.key, {"cpu": 1500}, priority=2, queued_at=9.0)
            for i, lq in enumerate(state.local_queues)
        ),
    )
    with_reasons = plan(more, 1.0)
    without = plan(more, 1.0, reasons=False)
    assert with_reasons.admissions == without.admissions
    assert with_reasons.evictions == without.evictions
    assert without.pending == ()
    assert {p.workload for p in with_reasons.pending} == {
        w.key for w in more.workloads if not w.admitted and w.key not in {a.workload for a in with_reasons.admissions}
    }
