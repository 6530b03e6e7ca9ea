"""The batched state changes every cluster backend calls: a fixed number of statements, claims checked."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from queues.models import AdmissionRecord, ResourceFlavor, Workload, WorkloadResource, WorkloadState
from queues.services import transitions
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

pytestmark = pytest.mark.django_db


def pending(count: int, cpu: str = "64") -> tuple[list[Workload], int]:
    cq = make_cluster_queue(cpu=cpu)
    lq = make_local_queue("team-a", "main", cq)
    return [submit(lq, f"job-{index}") for index in range(count)], cq.id


def admit_all(workloads: list[Workload], cq_id: int, at) -> list[int]:
    flavors = dict(ResourceFlavor.objects.values_list("name", "id"))
    claims = [transitions.Admit(w.pk, cq_id, {"cpu": "default"}) for w in workloads]
    return transitions.admit_many(claims, now=at, started=True, flavor_ids=flavors)


def statements(call) -> int:
    with CaptureQueriesContext(connection) as captured:
        call()
    return len(captured.captured_queries)


def test_given_many_claims_then_admit_many_writes_them_in_the_same_few_statements():
    few, cq_few = pending(3)
    at = timezone.now()
    small = statements(lambda: admit_all(few, cq_few, at))
    many = [submit(few[0].local_queue, f"more-{index}") for index in range(40)]

    assert statements(lambda: admit_all(many, cq_few, at)) == small
    assert AdmissionRecord.objects.filter(ended_at__isnull=True).count() == 43
    assert not WorkloadResource.objects.filter(flavor__isnull=True).exists()


def test_given_a_workload_no_longer_pending_then_admit_many_skips_it_and_keeps_the_order():
    workloads, cq_id = pending(4)
    Workload.objects.filter(pk=workloads[1].pk).update(state=WorkloadState.CANCELLED)

    claimed = admit_all(list(reversed(workloads)), cq_id, timezone.now())

    assert claimed == [workloads[3].pk, workloads[2].pk, workloads[0].pk]
    assert not AdmissionRecord.objects.filter(workload=workloads[1]).exists()


def test_given_many_finishes_then_each_ends_at_its_own_time_with_its_interval_closed():
    workloads, cq_id = pending(5)
    t0 = timezone.now() - timedelta(hours=1)
    admit_all(workloads, cq_id, t0)
    ends = [transitions.Finish(w.pk, t0 + timedelta(minutes=index + 1)) for index, w in enumerate(workloads)]

    finished = transitions.finish_many(ends)

    assert finished == [w.pk for w in workloads]
    for index, workload in enumerate(workloads):
        workload.refresh_from_db()
        assert (workload.state, workload.wall_time_seconds) == (WorkloadState.FINISHED, 60 * (index + 1))
        record = AdmissionRecord.objects.get(workload=workload)
        assert (record.ended_at, record.end_reason) == (t0 + timedelta(minutes=index + 1), "Finished")


def test_given_a_stale_admission_time_then_finish_many_loses_that_claim_only():
    workloads, cq_id = pending(2)
    t0 = timezone.now() - timedelta(hours=1)
    admit_all(workloads, cq_id, t0)
    stale = transitions.Finish(workloads[0].pk, t0 + timedelta(minutes=5), admitted_at=t0 - timedelta(hours=3))
    fresh = transitions.Finish(workloads[1].pk, t0 + timedelta(minutes=5), admitted_at=t0)

    assert transitions.finish_many([stale, fresh]) == [workloads[1].pk]
    assert Workload.objects.get(pk=workloads[0].pk).state == WorkloadState.ADMITTED
    assert AdmissionRecord.objects.get(workload=workloads[0]).ended_at is None


def test_given_evictions_then_time_moves_to_the_past_and_the_reason_is_the_pending_reason():
    workloads, cq_id = pending(3)
    t0 = timezone.now() - timedelta(hours=1)
    admit_all(workloads, cq_id, t0)

    evicted = transitions.evict_many(
        [transitions.Evict(w.pk, "BudgetExhausted: budget b exhausted", "BudgetExhausted") for w in workloads[:2]],
        now=t0 + timedelta(minutes=10),
    )

    assert evicted == [workloads[0].pk, workloads[1].pk]
    for workload in workloads[:2]:
        workload.refresh_from_db()
        assert (workload.state, workload.accumulated_past_execution_seconds, workload.eviction_count) == (
            WorkloadState.PENDING,
            600,
            1,
        )
        assert workload.pending_reason_code == "BudgetExhausted"
        assert not WorkloadResource.objects.filter(workload=workload, flavor__isnull=False).exists()
    assert Workload.objects.get(pk=workloads[2].pk).state == WorkloadState.ADMITTED
