"""Scenario tests translated from Kueue's own tests: each scenario file names the Kueue test or
function it comes from, and each case here failed on the engine before the rule was built."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fairshare.admission.ranking import borrowing_share, weighted
from fairshare.quota.quota import QuotaTree
from fairshare.simulation.scenario import load_scenario
from fairshare.simulation.simulator import simulate
from fairshare.types import ClusterQueue, Cohort, FlavorQuotas, ResourceQuota
from tests.fairshare.builders import run_scenario


def states(result: dict[str, Any]) -> dict[str, str]:
    return {name: entry["state"] for name, entry in result["workloads"].items()}


def preempted(result: dict[str, Any]) -> list[str]:
    return [event["workload"] for event in result["events"] if event["type"] == "preempted"]


def test_fair_sharing_prefers_the_subtree_that_does_not_borrow_at_every_cohort_level():
    # Given l1's job fits l1's nominal quota but the left subtree borrows from root, while r1's
    # job borrows inside its cohort but the right subtree does not borrow from root
    result = run_scenario("kueue_prioritize_non_borrowing.yaml")
    # Then root's level decides, as Kueue's FairSharingPrioritizeNonBorrowing does
    assert states(result)["r1-subtree-has-room"] == "Admitted"
    assert states(result)["l1-within-nominal"] == "Pending"


def test_two_zero_weight_borrowers_are_ordered_by_how_much_they_borrow():
    # Given two weight-0 ClusterQueues, zero-b borrowing more but with the higher-priority job
    result = run_scenario("kueue_zero_weight_borrowers.yaml")
    # Then the smaller borrower goes first (Kueue's CompareDRS), not the higher priority
    assert states(result)["a-next"] == "Admitted"
    assert states(result)["b-next"] == "Pending"


def test_zero_weight_tie_break_holds_with_the_allocation_formula_too():
    result = run_scenario("kueue_zero_weight_borrowers.yaml", "policy.cohortDominantShare=Allocation")
    assert states(result)["a-next"] == "Admitted"


def test_cohort_dominant_share_is_kueues_borrowing_over_lendable_with_the_candidate():
    # Given big (nominal 4, runs 5) and small (nominal 1, runs 3) each asking for 2 of 2 free CPU
    result = run_scenario("kueue_drs_borrowing.yaml")
    # Then Kueue's share with the candidate admitted picks big: 0.3 against 0.4
    assert states(result)["big-next"] == "Admitted"
    assert states(result)["small-next"] == "Pending"


def test_allocation_over_capacity_stays_available_as_a_named_option():
    # When the policy asks for the Volcano/KEP-752 formula between ClusterQueues
    result = run_scenario("kueue_drs_borrowing.yaml", "policy.cohortDominantShare=Allocation")
    # Then small (3 of 10 allocated) goes before big (5 of 10)
    assert states(result)["small-next"] == "Admitted"
    assert states(result)["big-next"] == "Pending"


def test_reclaim_takes_victims_from_the_local_queue_with_higher_usage_first():
    # Given a usage-based ClusterQueue borrowing with a heavy (priority 10) and a light job
    result = run_scenario("kueue_afs_reclaim_order.yaml")
    # When owner reclaims 2 CPU, the heavy LocalQueue's job goes, despite its priority
    assert preempted(result) == ["heavy-job"]
    assert states(result)["owner-job"] == "Admitted"
    assert states(result)["light-job"] == "Admitted"


BURSTY = Path(__file__).resolve().parents[2] / "playground" / "presets" / "bursty_tenant.yaml"


def hourly(result: dict[str, Any], key: str) -> list[int]:
    return result["series"]["allocation"][key]["cpu"][::6]  # ticks of 10 minutes


def test_bursty_tenant_flips_the_whole_queue_every_hour_with_kueues_entry_penalty():
    # Given one tenant bursting 400 jobs and three steady tenants, equal weights, 16 CPU
    result = simulate(load_scenario(BURSTY))
    # Then each pass hands the ClusterQueue to one side: the burst holds 8-16 CPU, then 0
    burst = hourly(result, "burst/main")
    assert 0 in burst[1:] and max(burst[1:]) >= 8
    assert result["summary"]["jainIndex"] < 0.95


def test_full_usage_in_pass_accounting_spreads_one_pass_across_the_tenants():
    # When each admission counts at its full request for the rest of the pass
    result = simulate(load_scenario(BURSTY, ["policy.inPassAccounting=FullUsage"]))
    # Then from the fourth hour on every tenant runs exactly its quarter, and fairness rises
    for key in ("burst/main", "steady-a/main", "steady-b/main", "steady-c/main"):
        assert hourly(result, key)[3:] == [4, 4, 4, 4], key
    assert result["summary"]["jainIndex"] > 0.97
    # and the stored entry penalty stays Kueue's (the option only changes the pass)
    assert result["summary"]["utilization"] == {"cpu": 1.0}


def test_full_usage_changes_nothing_outside_usage_based_scopes():
    document = load_scenario(BURSTY, ["clusterQueues.shared.admissionScope.admissionMode=TimeAware"])
    edited = load_scenario(
        BURSTY,
        ["clusterQueues.shared.admissionScope.admissionMode=TimeAware", "policy.inPassAccounting=FullUsage"],
    )
    assert simulate(document)["events"] == simulate(edited)["events"]


def admitted_count(result: dict[str, Any], local_queue: str) -> int:
    entries = result["workloads"].values()
    return sum(1 for entry in entries if entry["localQueue"] == local_queue and entry["state"] == "Admitted")


def test_exceed_weight_preempts_the_local_queue_above_its_weight_until_both_hold_their_half():
    # Given greedy/main holding all 8 CPU and fair/main (same weight, lower priority) asking for 6
    result = run_scenario("kep752_exceed_weight.yaml")
    # Then fair/main takes greedy's jobs until each LocalQueue holds its half, and no further
    assert admitted_count(result, "greedy/main") == 4
    assert admitted_count(result, "fair/main") == 4
    assert len(preempted(result)) == 4 and all(name.startswith("greedy-") for name in preempted(result))


def test_exceed_weight_follows_the_weights():
    # When fair/main weighs 3: it is entitled to three quarters of the ClusterQueue
    result = run_scenario("kep752_exceed_weight.yaml", "localQueues.fair/main.weight=3")
    assert admitted_count(result, "fair/main") == 6
    assert admitted_count(result, "greedy/main") == 2


def test_priority_preemption_does_not_do_what_exceed_weight_does():
    result = run_scenario(
        "kep752_exceed_weight.yaml", "clusterQueues.shared.preemption.withinClusterQueue=LowerPriority"
    )
    assert preempted(result) == [] and admitted_count(result, "fair/main") == 0


def test_a_workload_over_its_namespace_quota_preempts_lower_priority_work_of_that_namespace():
    # Given a namespace at its 4-CPU quota with low-priority batch work and withinNamespace: LowerPriority
    result = run_scenario("namespace_quota_preemption.yaml")
    # Then the urgent job evicts the two most recently admitted batch jobs and runs
    assert states(result)["urgent"] == "Admitted"
    assert sorted(preempted(result)) == ["batch-3", "batch-4"]


def test_without_the_namespace_policy_the_quota_only_makes_the_job_wait():
    result = run_scenario("namespace_quota_preemption.yaml", "namespaces.team.preemption.withinNamespace=Never")
    assert preempted(result) == []
    assert result["workloads"]["urgent"]["pendingReason"]["code"] == "NamespaceQuotaExceeded"


# Kueue's TestDominantResourceShare (pkg/cache/scheduler/fair_sharing_test.go): a ClusterQueue
# "cq" (cpu 2, gpu 5) and "lending-cq" (cpu 8, gpu 5) in one cohort; Kueue prints shares x 1000.
GPU = "example.com/gpu"


def kueue_share(usage: dict, request: dict, *, weight: float = 1.0, cq_quota=None, lender_quota=None) -> float:
    cq_quota = cq_quota or {"default": {"cpu": (2, None), GPU: (5, None)}}
    lender_quota = lender_quota or {"default": {"cpu": (8, None), GPU: (5, None)}}

    def flavor_quotas(spec: dict) -> tuple[FlavorQuotas, ...]:
        def quota(nominal: int, lending: int | None) -> ResourceQuota:
            return ResourceQuota(nominal * 1000, None, None if lending is None else lending * 1000)

        return tuple(
            FlavorQuotas(flavor, {resource: quota(*limits) for resource, limits in resources.items()})
            for flavor, resources in spec.items()
        )

    tree = QuotaTree(
        [Cohort("test-cohort")],
        [
            ClusterQueue("cq", "test-cohort", quotas=flavor_quotas(cq_quota)),
            ClusterQueue("lending-cq", "test-cohort", quotas=flavor_quotas(lender_quota)),
        ],
    )
    tree.add("cq", {fr: amount * 1000 for fr, amount in usage.items()})
    [(parent, borrowed)] = tree.borrowed_path("cq", {fr: amount * 1000 for fr, amount in request.items()})
    by_resource: dict[str, int] = {}
    for (_, resource), amount in borrowed.items():
        by_resource[resource] = by_resource.get(resource, 0) + amount
    return weighted(borrowing_share(by_resource, tree.lendable(parent)), weight)[0] * 1000


def test_kueue_dominant_resource_share_cases():
    cpu, gpu = ("default", "cpu"), ("default", GPU)
    assert kueue_share({cpu: 1, gpu: 2}, {}) == 0  # "usage below nominal"
    assert kueue_share({cpu: 3, gpu: 7}, {}) == pytest.approx(200)  # "usage above nominal": (7-5)*1000/10
    assert kueue_share({cpu: 3, gpu: 3}, {}) == pytest.approx(100)  # "one resource above nominal"
    assert kueue_share({cpu: 1, gpu: 2}, {cpu: 4, gpu: 4}) == pytest.approx(300)  # "usage with workload above nominal"
    assert kueue_share({gpu: 7}, {}, weight=2) == pytest.approx(100)  # "above nominal with integer weight"
    assert kueue_share({gpu: 7}, {}, weight=0.5) == pytest.approx(400)  # "above nominal with decimal weight"
    # "A resource with zero lendable": gpu lends nothing, so only cpu counts
    assert kueue_share(
        {cpu: 1, gpu: 1},
        {cpu: 4, gpu: 4},
        cq_quota={"default": {"cpu": (2, None), GPU: (2, 0)}},
        lender_quota={"default": {"cpu": (8, None), GPU: (64, 0)}},
    ) == pytest.approx(300)
    # "multiple flavors": ((15 + 10 - 20) + 0) * 1000 / 200
    assert kueue_share(
        {("on-demand", "cpu"): 15, ("spot", "cpu"): 5},
        {("on-demand", "cpu"): 10},
        cq_quota={"on-demand": {"cpu": (20, None)}, "spot": {"cpu": (80, None)}},
        lender_quota={"default": {"cpu": (100, None)}},
    ) == pytest.approx(25)


def test_classical_order_borrows_from_the_nearest_cohort_first():
    # Given two borrowers without fair sharing, one borrowing inside its cohort, the older one from root
    result = run_scenario("kueue_classical_borrowing_height.yaml")
    # Then the smaller borrowing height goes first (Kueue's entryOrdering), not the older one
    assert states(result)["a-borrows-in-its-cohort"] == "Admitted"
    assert states(result)["b-borrows-from-root"] == "Pending"
