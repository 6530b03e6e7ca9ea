"""Flavors unavailable to a pass (their cluster does not answer): never assigned, and said so."""

from __future__ import annotations

from fairshare.admission import reasons
from fairshare.admission.planner import plan
from fairshare.quota.quota import QuotaTree
from fairshare.types import ClusterQueue, FlavorQuotas, LocalQueue, Namespace, ResourceQuota, Snapshot, Workload

CPU = 1000


def spread(*flavors: tuple[str, int]) -> ClusterQueue:
    return ClusterQueue(
        "spread",
        quotas=tuple(FlavorQuotas(name, {"cpu": ResourceQuota(cpus * CPU)}) for name, cpus in flavors),
    )


def test_given_the_first_flavor_unavailable_then_the_next_one_is_assigned():
    tree = QuotaTree((), (spread(("down", 8), ("up", 8)),), frozenset({"down"}))

    assert tree.assign("spread", {"cpu": 2 * CPU}) == ({"cpu": "up"}, None)
    assert tree.nominal_assignment("spread", {"cpu": 2 * CPU}) == {"cpu": "up"}


def test_given_only_unavailable_flavors_then_the_failure_says_so_and_names_them():
    tree = QuotaTree(
        (),
        (
            spread(
                ("down", 8),
            ),
        ),
        frozenset({"down"}),
    )

    assignment, failure = tree.assign("spread", {"cpu": CPU})

    assert assignment is None and failure is not None and failure.unavailable
    assert tree.nominal_assignment("spread", {"cpu": CPU}) is None
    assert reasons.insufficient_quota("spread", failure) == (
        "ClusterQueue spread holds cpu only in flavors that are unavailable now (down: cluster down or disabled)"
    )


def test_given_a_plan_with_an_unavailable_flavor_then_work_goes_to_the_other_and_the_rest_waits_naming_it():
    workloads = tuple(
        Workload(f"team-a/w{index}", "team-a/main", {"cpu": CPU}, queued_at=float(index)) for index in range(3)
    )
    snapshot = Snapshot(
        flavors=("down", "up"),
        cluster_queues=(spread(("down", 8), ("up", 1)),),
        namespaces=(Namespace("team-a"),),
        local_queues=(LocalQueue("team-a/main", "team-a", "spread"),),
        workloads=workloads,
        unavailable_flavors=frozenset({"down"}),
    )

    decided = plan(snapshot, 100.0)

    assert [(a.workload, dict(a.assignment)) for a in decided.admissions] == [("team-a/w0", {"cpu": "up"})]
    assert {r.workload for r in decided.pending} == {"team-a/w1", "team-a/w2"}
    assert all(r.message.endswith("flavor down unavailable now (cluster down or disabled)") for r in decided.pending)
