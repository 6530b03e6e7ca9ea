"""Workloads bound to one cluster (their job is there): only that cluster's flavors are assigned.

A ClusterQueue may hold flavors of several clusters. A job submitted to one Slurm cluster
directly is imported bound to it (``Workload.bound_cluster``); the pass must never place it
on another cluster's flavor, whatever the flavor order, and must say so when it waits.
"""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from fairshare.admission import reasons
from fairshare.admission.planner import plan
from fairshare.quota.quota import QuotaTree
from fairshare.types import (
    INSUFFICIENT_QUOTA,
    PREEMPT_LOWER_PRIORITY,
    ClusterQueue,
    FlavorQuotas,
    LocalQueue,
    Namespace,
    Preemption,
    ResourceQuota,
    Snapshot,
    Workload,
)

CPU = 1000
CLUSTERS = {"old-cpu": "slurm-2205", "new-cpu": "slurm-2411", "sim-cpu": "sim"}


def mixed(*flavors: tuple[str, int], preemption: Preemption | None = None) -> ClusterQueue:
    return ClusterQueue(
        "mixed",
        quotas=tuple(FlavorQuotas(name, {"cpu": ResourceQuota(cpus * CPU)}) for name, cpus in flavors),
        preemption=preemption or Preemption(),
    )


def snapshot(queue: ClusterQueue, *workloads: Workload) -> Snapshot:
    return Snapshot(
        flavors=tuple(sorted(fq.flavor for fq in queue.quotas)),
        cluster_queues=(queue,),
        namespaces=(Namespace("team-a"),),
        local_queues=(LocalQueue("team-a/main", "team-a", "mixed"),),
        workloads=workloads,
        flavor_clusters=CLUSTERS,
    )


def job(name: str, cpus: int, bound: str = "", at: float = 0.0, **fields) -> Workload:
    return Workload(f"team-a/{name}", "team-a/main", {"cpu": cpus * CPU}, queued_at=at, bound_cluster=bound, **fields)


def test_given_a_bound_request_then_the_quota_tree_skips_the_first_flavor_of_another_cluster():
    tree = QuotaTree((), (mixed(("old-cpu", 8), ("new-cpu", 8)),), flavor_clusters=CLUSTERS)

    assert tree.assign("mixed", {"cpu": 2 * CPU}) == ({"cpu": "old-cpu"}, None)
    assert tree.assign("mixed", {"cpu": 2 * CPU}, "slurm-2411") == ({"cpu": "new-cpu"}, None)
    assert tree.nominal_assignment("mixed", {"cpu": 2 * CPU}, "slurm-2411") == {"cpu": "new-cpu"}
    assert tree.within_nominal("mixed", {"cpu": 9 * CPU}, "slurm-2411") is False


def test_given_an_imported_job_then_it_is_admitted_only_on_its_clusters_flavor_even_with_room_first_in_order():
    queue = mixed(("old-cpu", 8), ("new-cpu", 8))

    decided = plan(snapshot(queue, job("free", 2), job("imported", 2, "slurm-2411", at=1.0)), 100.0)

    assert {a.workload: dict(a.assignment) for a in decided.admissions} == {
        "team-a/free": {"cpu": "old-cpu"},
        "team-a/imported": {"cpu": "new-cpu"},
    }


def test_given_its_cluster_full_then_a_bound_job_waits_naming_its_cluster_while_the_other_has_room():
    queue = mixed(("old-cpu", 8), ("new-cpu", 2))

    decided = plan(snapshot(queue, job("first", 2, "slurm-2411"), job("second", 2, "slurm-2411", at=1.0)), 100.0)

    assert [(a.workload, dict(a.assignment)) for a in decided.admissions] == [("team-a/first", {"cpu": "new-cpu"})]
    (waiting,) = decided.pending
    assert waiting.workload == "team-a/second" and waiting.code == INSUFFICIENT_QUOTA
    assert waiting.message == (
        "insufficient quota for cpu in flavor new-cpu of ClusterQueue mixed: 2 more needed (requests 2, 0 available)"
        "; bound to cluster slurm-2411 (its job was submitted there): flavor old-cpu of other clusters not tried"
    )


def test_given_no_flavor_on_its_cluster_then_the_job_waits_saying_the_queue_holds_only_other_clusters_flavors():
    queue = mixed(("old-cpu", 8), ("sim-cpu", 8))

    decided = plan(snapshot(queue, job("lost", 1, "slurm-2411")), 100.0)

    assert decided.admissions == ()
    (waiting,) = decided.pending
    assert waiting.message == (
        "bound to cluster slurm-2411 (its job was submitted there), but ClusterQueue mixed holds cpu only in flavors "
        "of other clusters (old-cpu, sim-cpu)"
    )
    assert waiting.shortages[0].never_fits


def test_given_the_same_shape_bound_to_two_clusters_then_one_failing_does_not_fail_the_other():
    # The first candidate (bound to the full cluster) fails its class; the second, same requests
    # but another binding, must be checked on its own, not dismissed by the memoised failure.
    queue = mixed(("old-cpu", 8), ("new-cpu", 1))
    workloads = (
        job("filler", 1, "slurm-2411"),
        job("blocked", 2, "slurm-2411", at=1.0),
        job("fits", 2, "slurm-2205", at=2.0),
        job("blocked-too", 2, "slurm-2411", at=3.0),
    )

    for with_reasons in (True, False):
        decided = plan(snapshot(queue, *workloads), 100.0, reasons=with_reasons)
        assert {a.workload: dict(a.assignment) for a in decided.admissions} == {
            "team-a/filler": {"cpu": "new-cpu"},
            "team-a/fits": {"cpu": "old-cpu"},
        }
    assert workloads[1].shape_key != workloads[2].shape_key
    assert workloads[1].shape_key == workloads[3].shape_key


def test_given_a_bound_preemptor_then_only_victims_on_its_cluster_are_evicted():
    queue = mixed(("old-cpu", 2), ("new-cpu", 2), preemption=Preemption(within_cluster_queue=PREEMPT_LOWER_PRIORITY))
    running = (
        job("on-old", 2, admitted=True, admitted_at=1.0, cluster_queue="mixed", assignment={"cpu": "old-cpu"}),
        job("on-new", 2, admitted=True, admitted_at=2.0, cluster_queue="mixed", assignment={"cpu": "new-cpu"}),
    )

    decided = plan(snapshot(queue, *running, job("urgent", 2, "slurm-2411", at=3.0, priority=10)), 100.0)

    assert [e.workload for e in decided.evictions] == ["team-a/on-new"]
    assert [(a.workload, dict(a.assignment)) for a in decided.admissions] == [("team-a/urgent", {"cpu": "new-cpu"})]


def test_given_its_cluster_down_then_the_bound_job_waits_naming_both_the_outage_and_the_binding():
    queue = mixed(("old-cpu", 8), ("new-cpu", 8))
    base = snapshot(queue, job("imported", 1, "slurm-2411"))
    down = replace(base, unavailable_flavors=frozenset({"new-cpu"}))

    decided = plan(down, 100.0)

    assert decided.admissions == ()
    assert decided.pending[0].message == (
        "ClusterQueue mixed holds cpu only in flavors that are unavailable now (new-cpu: cluster down or disabled)"
        "; bound to cluster slurm-2411 (its job was submitted there): flavor old-cpu of other clusters not tried"
    )


def test_reasons_name_at_most_five_other_flavors():
    tree = QuotaTree(
        (),
        (mixed(*((f"f{index}", 1) for index in range(8))),),
        flavor_clusters={f"f{index}": "elsewhere" for index in range(8)},
    )

    failure = tree.assign("mixed", {"cpu": CPU}, "mine")[1]

    assert failure is not None and failure.foreign_only
    assert reasons.insufficient_quota("mixed", failure).endswith("(f0, f1, f2, f3, f4 and 3 more)")


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    sizes=st.lists(st.tuples(st.integers(1, 4), st.sampled_from(["", "slurm-2205", "slurm-2411", "sim"])), max_size=25),
    capacities=st.tuples(st.integers(0, 8), st.integers(0, 8), st.integers(0, 8)),
)
def test_property_bound_workloads_only_get_their_clusters_flavors_and_unbound_ones_keep_kueue_order(
    seed, sizes, capacities
):
    order = ["old-cpu", "new-cpu", "sim-cpu"]
    random.Random(seed).shuffle(order)
    queue = mixed(*zip(order, capacities, strict=True))
    workloads = tuple(job(f"w{index}", cpus, bound, at=float(index)) for index, (cpus, bound) in enumerate(sizes))
    by_key = {w.key: w for w in workloads}

    decided = plan(snapshot(queue, *workloads), 100.0)
    again = plan(snapshot(queue, *reversed(workloads)), 100.0)
    quick = plan(snapshot(queue, *workloads), 100.0, reasons=False)

    assert decided.admissions == again.admissions == quick.admissions  # deterministic, whatever the input order
    used = dict.fromkeys(order, 0)
    for admission in decided.admissions:
        workload = by_key[admission.workload]
        flavor = admission.assignment["cpu"]
        used[flavor] += workload.requests["cpu"]
        if workload.bound_cluster:
            assert CLUSTERS[flavor] == workload.bound_cluster
    for flavor, cpus in zip(order, capacities, strict=True):
        assert used[flavor] <= cpus * CPU
    # Nothing that waits would have fitted a flavor it may use with the room left at the end.
    left = {flavor: cpus * CPU - used[flavor] for flavor, cpus in zip(order, capacities, strict=True)}
    for reason in decided.pending:
        workload = by_key[reason.workload]
        allowed = [f for f in order if not workload.bound_cluster or CLUSTERS[f] == workload.bound_cluster]
        assert all(workload.requests["cpu"] > left[f] for f in allowed)
        if workload.bound_cluster and len(allowed) < len(order):
            assert f"cluster {workload.bound_cluster}" in reason.message
