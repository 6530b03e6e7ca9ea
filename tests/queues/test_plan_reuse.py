"""A pass whose snapshot equals the one this process planned last for the unit reuses that plan,
re-dated (``admission.passes._planned``): an idle pass costs the load, not the engine. Any change
to what the engine sees plans afresh, and the stored reasons and queue order stay those a fresh
plan writes."""

from __future__ import annotations

import random

import pytest

from fairshare.admission import planner
from queues.admission import load
from queues.admission import passes as admission
from queues.models import AdmissionMode, LocalQueue, PendingOrder, Workload, WorkloadReason, WorkloadState
from tests.queues.test_snapshot import busy_unit
from tests.queues.test_snapshot_reuse import settled

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def engine_calls(monkeypatch) -> list[float]:
    """Every call of the engine's planner by the pass, by its ``now``."""
    calls: list[float] = []
    real = planner.plan

    def counted(snapshot, now, **options):
        calls.append(now)
        return real(snapshot, now, **options)

    monkeypatch.setattr(admission, "plan_admissions", counted)
    return calls


def stored() -> tuple[dict[int, tuple], list[tuple]]:
    reasons = {
        row[0]: row[1:]
        for row in WorkloadReason.objects.values_list("workload_id", "code", "message", "behind_id", "shortages")
    }
    order = list(PendingOrder.objects.order_by("cluster_queue_id").values_list("cluster_queue_id", "workload_ids"))
    return reasons, order


def test_given_nothing_changed_then_the_next_pass_reuses_the_plan_and_stores_the_same_reasons(engine_calls):
    unit = busy_unit(AdmissionMode.USAGE_BASED, random.Random(21))
    load.clear_caches()
    admission.forget_plans()
    settled(unit)
    before = stored()
    planned = len(engine_calls)

    result = admission.run_admission_pass(unit.key)

    assert len(engine_calls) == planned  # the engine was not called again
    assert not result.admitted and result.pending > 0
    assert stored() == before
    admission.forget_plans()
    load.clear_caches()
    fresh = admission.run_admission_pass(unit.key)
    assert len(engine_calls) == planned + 1
    assert (fresh.admitted, fresh.pending) == (result.admitted, result.pending)
    assert stored() == before  # what a fresh plan writes is what the reused one left


def test_given_a_weight_or_a_new_workload_then_the_next_pass_plans_afresh(engine_calls):
    unit = busy_unit(AdmissionMode.USAGE_BASED, random.Random(22))
    admission.forget_plans()
    settled(unit)
    planned = len(engine_calls)

    queue = LocalQueue.objects.order_by("id").first()
    LocalQueue.objects.filter(pk=queue.pk).update(weight=queue.weight * 3)
    admission.run_admission_pass(unit.key)
    assert len(engine_calls) == planned + 1

    waiting = Workload.objects.filter(state=WorkloadState.PENDING).order_by("id").first()
    Workload.objects.filter(pk=waiting.pk).update(priority=999)
    admission.run_admission_pass(unit.key)
    assert len(engine_calls) == planned + 2
    assert WorkloadReason.objects.filter(workload=waiting).exists()
