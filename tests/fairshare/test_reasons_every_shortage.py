"""A pending reason names every short resource with its amounts, the dominant one first.

The dominant shortage (``fairshare.types.Shortage.dominance_key``, docs/design.md): what
waiting cannot cure first (no flavor has quota, or more than the ClusterQueue could ever get),
then the largest missing fraction of the request, then of the queue's ceiling, then the name.
"""

from __future__ import annotations

from fairshare import (
    ClusterQueue,
    FlavorQuotas,
    LocalQueue,
    Namespace,
    ResourceQuota,
    Shortage,
    Snapshot,
    Workload,
    plan,
)
from fairshare.admission import reasons as text
from fairshare.quota.quota import FitFailure, QuotaTree, dominant_first
from fairshare.types import INSUFFICIENT_QUOTA, NAMESPACE_QUOTA_EXCEEDED

GI = 1024**3 * 1000  # millis of one Gi
GPU = "nvidia.com/gpu"


def _cluster(quotas: tuple[FlavorQuotas, ...], workloads: tuple[Workload, ...], **namespace) -> Snapshot:
    return Snapshot(
        flavors=tuple(sorted({q.flavor for q in quotas})),
        cluster_queues=(ClusterQueue("gpu-training", quotas=quotas),),
        namespaces=(Namespace("a", **namespace),),
        local_queues=(LocalQueue("a/main", "a", "gpu-training"),),
        workloads=workloads,
    )


def _issue_example() -> Snapshot:
    """The issue's 8-GPU job: the a100 flavor has 8 GPUs and 640Gi, a running job holds all 8
    GPUs and 320Gi; the job asks 8 GPUs and 384Gi: GPU at 0 available, memory 64Gi short."""
    a100 = FlavorQuotas("a100", {GPU: ResourceQuota(nominal=8000), "memory": ResourceQuota(nominal=640 * GI)})
    running = Workload(
        "a/running",
        "a/main",
        {GPU: 8000, "memory": 320 * GI},
        admitted=True,
        assignment={GPU: "a100", "memory": "a100"},
    )
    job = Workload("a/train-8gpu", "a/main", {GPU: 8000, "memory": 384 * GI}, queued_at=1)
    return _cluster((a100,), (running, job))


def test_given_the_issues_8_gpu_job_then_both_gpu_and_memory_are_named_gpu_first():
    (reason,) = plan(_issue_example(), 10.0).pending

    assert reason.code == INSUFFICIENT_QUOTA
    assert reason.message == (
        f"insufficient quota for {GPU} in flavor a100 of ClusterQueue gpu-training: 8 more needed "
        "(requests 8, 0 available); also insufficient quota for memory in flavor a100 of ClusterQueue "
        "gpu-training: 64Gi more needed (requests 384Gi, 320Gi available)"
    )
    assert reason.shortages == (
        Shortage(GPU, "a100", 8000, 0, 8000),
        Shortage("memory", "a100", 384 * GI, 320 * GI, 640 * GI),
    )


def test_given_one_short_resource_then_the_sentence_is_the_one_it_always_was():
    a100 = FlavorQuotas("a100", {GPU: ResourceQuota(nominal=8000), "memory": ResourceQuota(nominal=640 * GI)})
    running = Workload("a/running", "a/main", {GPU: 4000}, admitted=True, assignment={GPU: "a100"})
    job = Workload("a/job", "a/main", {GPU: 6000, "memory": 64 * GI}, queued_at=1)

    (reason,) = plan(_cluster((a100,), (running, job)), 10.0).pending

    assert reason.message == (
        f"insufficient quota for {GPU} in flavor a100 of ClusterQueue gpu-training: 2 more needed "
        "(requests 6, 4 available)"
    )
    assert [s.resource for s in reason.shortages] == [GPU]


def test_given_two_resource_groups_short_then_both_groups_are_named():
    """CPU and memory in flavor default, GPUs in flavor a100: the first group's failure used to
    end the search, so the GPU shortage went unnamed."""
    default = FlavorQuotas("default", {"cpu": ResourceQuota(nominal=8000), "memory": ResourceQuota(nominal=64 * GI)})
    a100 = FlavorQuotas("a100", {GPU: ResourceQuota(nominal=2000)})
    job = Workload("a/job", "a/main", {"cpu": 4000, "memory": 96 * GI, GPU: 4000})

    (reason,) = plan(_cluster((default, a100), (job,)), 10.0).pending

    # Both exceed what the queue could ever get; GPUs miss 2 of 4 (1/2 of the request), memory
    # 32Gi of 96Gi (1/3): GPUs first.
    assert [(s.resource, s.flavor) for s in reason.shortages] == [(GPU, "a100"), ("memory", "default")]
    assert reason.message.startswith(f"requests 4 {GPU} but ClusterQueue gpu-training can never get more than 2")
    assert "; also requests 96Gi memory but ClusterQueue gpu-training can never get more than 64Gi" in reason.message
    assert "cpu" not in reason.message  # cpu fits


def test_dominance_orders_never_fits_first_then_the_missing_fraction_of_the_request():
    now_short = Shortage("cpu", "default", 10_000, 0, 16_000)  # all of it missing, but it could fit later
    never = Shortage("memory", "default", 10 * GI, 9 * GI, 8 * GI)  # 10% missing, but can never fit
    half = Shortage(GPU, "a100", 4000, 2000, 8000)
    no_flavor = Shortage("example.com/fpga", None, 1000, 0, 0)

    ordered = dominant_first([half, now_short, never, no_flavor])

    assert ordered == (no_flavor, never, now_short, half)  # no flavor: of the ceiling infinite


def test_equal_fractions_of_the_request_go_by_the_fraction_of_the_ceiling_then_by_name():
    small_queue = Shortage("cpu", "default", 4000, 0, 4000)  # 4 of 4: all of the ceiling
    big_queue = Shortage("memory", "default", 4 * GI, 0, 64 * GI)  # 4Gi of 64Gi
    twin = Shortage("alpha", "default", 4000, 0, 4000)

    assert dominant_first([big_queue, small_queue, twin]) == (twin, small_queue, big_queue)
    assert dominant_first([small_queue, twin, big_queue]) == (twin, small_queue, big_queue)  # any input order


def test_the_closest_flavor_is_chosen_by_its_missing_fraction_not_by_raw_amounts():
    """Bytes dwarf GPUs: comparing raw amounts picked the flavor short of 1 GPU over the one short
    of 1 KiB of memory; the fraction of the request picks the one that is nearly there."""
    quotas = (
        FlavorQuotas("a100", {GPU: ResourceQuota(nominal=1000), "memory": ResourceQuota(nominal=64 * GI)}),
        FlavorQuotas("h100", {GPU: ResourceQuota(nominal=2000), "memory": ResourceQuota(nominal=32 * GI)}),
    )
    tree = QuotaTree((), (ClusterQueue("q", quotas=quotas),))

    assignment, failure = tree.assign("q", {GPU: 2000, "memory": 33 * GI})

    assert assignment is None and isinstance(failure, FitFailure)
    # a100: 1 of 2 GPUs missing (50%); h100: 1Gi of 33Gi memory missing (3%): h100 is closer.
    assert [(s.resource, s.flavor) for s in failure.shortages] == [("memory", "h100")]
    assert (failure.resource, failure.flavor, failure.missing) == ("memory", "h100", GI)  # the old single fields


def test_given_a_namespace_over_its_quota_in_two_resources_then_both_are_named_the_furthest_over_first():
    default = FlavorQuotas("default", {"cpu": ResourceQuota(nominal=64_000), "memory": ResourceQuota(nominal=512 * GI)})
    job = Workload("a/job", "a/main", {"cpu": 8000, "memory": 64 * GI})
    snapshot = _cluster((default,), (job,), quota={"cpu": 6000, "memory": 32 * GI})

    (reason,) = plan(snapshot, 10.0).pending

    assert reason.code == NAMESPACE_QUOTA_EXCEEDED
    # memory: 32Gi over of 64Gi requested (1/2); cpu: 2 over of 8 (1/4)
    assert reason.message == (
        text.namespace_quota("a", "memory", 32 * GI, 0, 64 * GI)
        + "; also "
        + text.namespace_quota("a", "cpu", 6000, 0, 8000)
    )


def test_workloads_explained_by_reference_carry_the_heads_shortages():
    a100 = FlavorQuotas("a100", {GPU: ResourceQuota(nominal=8000), "memory": ResourceQuota(nominal=640 * GI)})
    running = Workload(
        "a/running",
        "a/main",
        {GPU: 8000, "memory": 320 * GI},
        admitted=True,
        assignment={GPU: "a100", "memory": "a100"},
    )
    waiting = tuple(Workload(f"a/job-{i}", "a/main", {GPU: 8000, "memory": 384 * GI}, queued_at=i) for i in range(4))

    result = plan(_cluster((a100,), (running, *waiting)), 10.0, explain_first=2)

    head = result.pending[0]
    assert [s.resource for s in head.shortages] == [GPU, "memory"]
    later = [r for r in result.pending if r.position > 2]
    assert later and all(r.message == result.by_reference["gpu-training"] for r in later)
    assert all(r.shortages == head.shortages for r in later)
    assert result.by_reference_shortages["gpu-training"] == head.shortages
