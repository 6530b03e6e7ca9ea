"""KEP-28 stories: exhaustion holds (and drains) the target; renewal or more allocation lifts it."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from budgets import services
from budgets.models import Budget, BudgetEvent
from core.models import PolicyChange, Surface
from queues.models import AdmissionRecord, QueueHold, WorkloadState
from tests.budgets.helpers import (
    T0,
    add_gpu_quota,
    admission_pass,
    at,
    budget,
    cluster,
    finish,
    reconcile,
    state_of,
    submit,
)

pytestmark = pytest.mark.django_db


def pending_reason(workload) -> tuple[str, str]:
    workload.refresh_from_db()
    return workload.pending_reason_code, workload.pending_reason_message


def test_given_hold_when_budget_is_exhausted_then_new_work_waits_while_running_work_finishes():
    cq, lq = cluster()
    team = budget(lq, hours="1", action=Budget.Action.HOLD)
    running = submit(lq, "running", duration=7200)
    admission_pass(cq, at())

    result = reconcile(team, at(hours=1))
    late = submit(lq, "late")
    admission_pass(cq, at(hours=1, seconds=5))

    assert result.hold == "placed"
    assert state_of(running) == WorkloadState.ADMITTED
    assert state_of(late) == WorkloadState.PENDING
    assert pending_reason(late) == ("BudgetExhausted", "budget team-budget exhausted: 1 of 1 hours used this period")
    hold = QueueHold.objects.get(source=f"budget:{team.pk}")
    assert (hold.local_queue_id, hold.drain) == (lq.pk, False)
    assert PolicyChange.objects.filter(object_type="queuehold", action="create", surface=Surface.SYSTEM).count() == 1
    assert list(BudgetEvent.objects.values_list("kind", flat=True).order_by("id")) == [
        "ThresholdCrossed",
        "ThresholdCrossed",
        "Exhausted",
        "HoldPlaced",
    ]


def test_given_hold_and_drain_when_budget_is_exhausted_then_running_work_is_evicted_with_the_budget_reason():
    cq, lq = cluster()
    team = budget(lq, hours="1", action=Budget.Action.HOLD_AND_DRAIN)
    first, second = submit(lq, "first", duration=7200), submit(lq, "second", duration=7200)
    admission_pass(cq, at())

    reconcile(team, at(minutes=30))  # two workloads: one hour of wall time in 30 minutes
    drained = admission_pass(cq, at(minutes=30, seconds=5))
    admission_pass(cq, at(minutes=30, seconds=10))  # the next pass keeps them out, with the reason

    assert sorted(drained.evicted) == ["team-a/first", "team-a/second"]
    for workload in (first, second):
        assert state_of(workload) == WorkloadState.PENDING
        assert workload.last_eviction_reason.startswith("BudgetExhausted: budget team-budget exhausted")
        assert pending_reason(workload)[0] == "BudgetExhausted"
    assert set(AdmissionRecord.objects.values_list("end_reason", flat=True)) == {"Evicted"}
    after = reconcile(team, at(hours=2))
    assert after.status.used_hours == Decimal("1.002778")  # charged until the eviction at 00:30:05, no further


def test_given_monthly_renewal_when_the_next_period_starts_then_the_hold_lifts_by_itself():
    cq, lq = cluster()
    team = budget(lq, hours="1", renewal=Budget.Renewal.MONTHLY)
    job = submit(lq, "march", duration=3600)
    admission_pass(cq, T0 + timedelta(days=30))  # 31 March 00:00, finishes 01:00
    finish(job, T0 + timedelta(days=30, hours=1))
    assert reconcile(team, T0 + timedelta(days=30, hours=2)).hold == "placed"
    waiting = submit(lq, "april")
    admission_pass(cq, T0 + timedelta(days=30, hours=3))
    assert state_of(waiting) == WorkloadState.PENDING
    assert "resets 2026-04-01" in pending_reason(waiting)[1]

    renewed = reconcile(team, T0 + timedelta(days=31, minutes=1))
    admission_pass(cq, T0 + timedelta(days=31, minutes=2))

    assert renewed.hold == "lifted"
    assert renewed.status.period_start == T0 + timedelta(days=31)
    assert renewed.status.used_hours == 0
    assert state_of(waiting) == WorkloadState.ADMITTED
    kinds = list(BudgetEvent.objects.filter(period_start=T0 + timedelta(days=31)).values_list("kind", flat=True))
    assert sorted(kinds) == ["HoldLifted", "Renewed"]
    assert "a new period started 2026-04-01" in BudgetEvent.objects.get(kind="HoldLifted").message


def test_given_an_exhausted_budget_when_the_allocation_is_raised_then_the_hold_lifts_and_both_changes_are_audited(
    django_user_model,
):
    cq, lq = cluster()
    team = budget(lq, hours="1")
    submit(lq, "running", duration=36000)
    admission_pass(cq, at())
    reconcile(team, at(hours=1, minutes=30))
    admin = django_user_model.objects.create_user("root", is_staff=True)

    services.update_budget(team, allocated_hours=Decimal(2), actor=admin, surface=Surface.API)
    result = reconcile(team, at(hours=1, minutes=31))

    assert result.hold == "lifted"
    assert not QueueHold.objects.exists()
    change = PolicyChange.objects.get(object_type="budget", action="update")
    assert (change.actor, change.before["allocated_hours"], change.after["allocated_hours"]) == (admin, "1", "2")
    assert PolicyChange.objects.filter(object_type="queuehold", action="delete").exists()
    lifted = BudgetEvent.objects.get(kind="HoldLifted")
    assert "allocation raised from 1 to 2 hours" in lifted.message
    assert reconcile(team, at(hours=2, minutes=1)).hold == "placed"  # used up again: held again


def test_given_a_gpu_hours_budget_then_the_hold_message_names_budget_used_allocated_and_reset_date():
    cq, lq = cluster()
    add_gpu_quota(cq, "8")
    gpus = budget(
        lq,
        name="vision-gpu-hours",
        hours="20",
        kind=Budget.Kind.RESOURCE_HOURS,
        resource="nvidia.com/gpu",
        renewal=Budget.Renewal.MONTHLY,
    )
    submit(lq, "train", requests={"cpu": "1", "nvidia.com/gpu": "8"}, duration=36000)
    admission_pass(cq, at())

    reconcile(gpus, at(hours=2, minutes=45))

    assert QueueHold.objects.get().message == (
        "budget vision-gpu-hours exhausted: 22 of 20 GPU-hours used this period (resets 2026-04-01)"
    )


def test_given_the_action_changes_to_hold_and_drain_then_the_existing_hold_starts_draining():
    cq, lq = cluster()
    team = budget(lq, hours="1")
    submit(lq, "running", duration=36000)
    admission_pass(cq, at())
    reconcile(team, at(hours=2))
    Budget.objects.filter(pk=team.pk).update(action=Budget.Action.HOLD_AND_DRAIN)

    assert reconcile(team, at(hours=2, minutes=1)).hold == "updated"

    assert QueueHold.objects.get().drain is True
    assert PolicyChange.objects.filter(object_type="queuehold", action="update").count() == 1


def test_given_a_held_queue_when_its_budget_is_deleted_then_the_hold_goes_with_it():
    _cq, lq = cluster()
    team = budget(lq, hours="0")
    reconcile(team, at(minutes=1))  # a zero budget is exhausted from the start
    assert QueueHold.objects.exists()

    services.delete_budget(team)

    assert not QueueHold.objects.exists()
    assert PolicyChange.objects.filter(object_type="queuehold", action="delete").exists()
    assert PolicyChange.objects.filter(object_type="budget", action="delete").exists()


def test_given_a_budget_whose_first_period_has_not_started_then_nothing_is_charged_or_held():
    cq, lq = cluster()
    future = budget(lq, hours="0", anchor=T0 + timedelta(days=1))
    submit(lq, "job")
    admission_pass(cq, at())

    result = reconcile(future, at(hours=5))

    assert (result.lines, result.hold, result.status.measured) == (0, "none", False)
