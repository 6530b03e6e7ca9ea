"""ExceedWeight and preemption for namespace quota are live, not only in scenario files: the
admission pass on PostgreSQL reads them from the models through the snapshot."""

from __future__ import annotations

import pytest

from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.models import Namespace, Workload, WorkloadState
from queues.models.choices import WithinClusterQueuePreemption, WithinNamespacePreemption
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

pytestmark = pytest.mark.django_db


def run_pass(cq) -> None:
    admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.id).key)


def states() -> dict[str, str]:
    return dict(Workload.objects.values_list("name", "state"))


def test_given_exceed_weight_when_a_second_local_queue_arrives_then_the_greedy_one_gives_back_to_half():
    cq = make_cluster_queue(cpu="4")
    cq.preemption_within_cluster_queue = WithinClusterQueuePreemption.EXCEED_WEIGHT
    cq.save()
    greedy = make_local_queue("greedy", "main", cq)
    fair = make_local_queue("fair", "main", cq)
    for index in range(4):
        submit(greedy, f"g-{index}", priority=10)
    run_pass(cq)
    for index in range(3):
        submit(fair, f"f-{index}")

    run_pass(cq)

    admitted = Workload.objects.filter(state=WorkloadState.ADMITTED)
    by_queue = sorted(w.local_queue.namespace.name for w in admitted)
    assert by_queue == ["fair", "fair", "greedy", "greedy"]
    evicted = Workload.objects.filter(name__startswith="g-", state=WorkloadState.PENDING)
    assert evicted.count() == 2 and all(w.eviction_count == 1 for w in evicted)


def test_given_within_namespace_when_the_quota_is_full_then_lower_priority_work_of_the_namespace_makes_way():
    cq = make_cluster_queue(cpu="16")
    batch = make_local_queue("team", "batch", cq, ns_quota="2")
    urgent = make_local_queue("team", "urgent", cq)
    Namespace.objects.filter(name="team").update(preemption_within_namespace=WithinNamespacePreemption.LOWER_PRIORITY)
    submit(batch, "b-1")
    submit(batch, "b-2")
    run_pass(cq)
    submit(urgent, "u-1", priority=10)

    run_pass(cq)

    assert states()["u-1"] == WorkloadState.ADMITTED
    batch_states = sorted(state for name, state in states().items() if name.startswith("b-"))
    assert batch_states == [WorkloadState.ADMITTED, WorkloadState.PENDING]


def test_given_no_namespace_policy_then_the_quota_only_makes_work_wait():
    cq = make_cluster_queue(cpu="16")
    batch = make_local_queue("team", "batch", cq, ns_quota="2")
    urgent = make_local_queue("team", "urgent", cq)
    submit(batch, "b-1")
    submit(batch, "b-2")
    run_pass(cq)
    submit(urgent, "u-1", priority=10)

    run_pass(cq)

    waiting = Workload.objects.get(name="u-1")
    assert waiting.state == WorkloadState.PENDING and waiting.pending_reason_code == "NamespaceQuotaExceeded"
