"""The simulated cluster and wall-time accounting: derived from timestamps, nothing lost."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.models import AdmissionRecord, Workload, WorkloadState
from queues.services import cluster, transitions
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

pytestmark = pytest.mark.django_db


def admit_all(cq, now):
    admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.id).key, now=now)


def test_given_duration_over_when_task_runs_late_then_finish_time_is_exact():
    cq = make_cluster_queue(cpu="4")
    lq = make_local_queue("team-a", "main", cq)
    submit(lq, "job", duration=600)
    t0 = timezone.now() - timedelta(hours=2)
    admit_all(cq, t0)

    finished = cluster.complete_due_workloads(now=t0 + timedelta(hours=1))  # an hour late

    workload = Workload.objects.get()
    assert finished == [workload.id]
    assert workload.state == WorkloadState.FINISHED
    assert workload.finished_at == t0 + timedelta(seconds=600)
    assert workload.wall_time_seconds == 600
    assert AdmissionRecord.objects.get().seconds() == 600


def test_given_duration_not_over_then_still_running():
    cq = make_cluster_queue(cpu="4")
    lq = make_local_queue("team-a", "main", cq)
    submit(lq, "job", duration=600)
    t0 = timezone.now()
    admit_all(cq, t0)

    assert cluster.complete_due_workloads(now=t0 + timedelta(seconds=599)) == []


def test_given_max_runtime_shorter_than_run_then_it_fails_at_the_limit():
    cq = make_cluster_queue(cpu="4")
    lq = make_local_queue("team-a", "main", cq)
    workload = submit(lq, "job", duration=3600)
    Workload.objects.filter(pk=workload.pk).update(max_runtime_seconds=900)
    t0 = timezone.now() - timedelta(hours=2)
    admit_all(cq, t0)

    cluster.complete_due_workloads(now=t0 + timedelta(hours=2))

    workload.refresh_from_db()
    assert (workload.state, workload.wall_time_seconds) == (WorkloadState.FAILED, 900)


@override_settings(CLUSTER_BACKEND="external")
def test_given_external_backend_then_nothing_finishes_by_itself():
    cq = make_cluster_queue(cpu="4")
    lq = make_local_queue("team-a", "main", cq)
    submit(lq, "job", duration=1)
    t0 = timezone.now() - timedelta(hours=1)
    admit_all(cq, t0)

    assert cluster.sync_cluster(now=timezone.now()).ended == []
    workload = Workload.objects.get()
    assert workload.state == WorkloadState.ADMITTED
    assert workload.started_at is None  # an executor reports the start


def test_given_evict_and_readmit_then_wall_time_accumulates_exactly():
    cq = make_cluster_queue(cpu="4")
    lq = make_local_queue("team-a", "main", cq)
    workload = submit(lq, "job", duration=None)
    t0 = timezone.now() - timedelta(hours=3)
    admit_all(cq, t0)
    transitions.evict(workload_id=workload.id, now=t0 + timedelta(minutes=7), message="preempted")
    admit_all(cq, t0 + timedelta(minutes=30))

    workload.refresh_from_db()
    assert workload.accumulated_past_execution_seconds == 7 * 60
    assert workload.current_wall_time_seconds(t0 + timedelta(minutes=40)) == 10 * 60  # derived on read
    assert cluster.total_wall_time_seconds(workload.id, now=t0 + timedelta(minutes=40)) == 17 * 60


def test_given_finish_reported_twice_then_only_the_first_counts():
    cq = make_cluster_queue(cpu="4")
    lq = make_local_queue("team-a", "main", cq)
    workload = submit(lq, "job", duration=None)
    t0 = timezone.now() - timedelta(hours=1)
    admit_all(cq, t0)

    assert transitions.finish(workload_id=workload.id, at=t0 + timedelta(minutes=10)) is True
    assert transitions.finish(workload_id=workload.id, at=t0 + timedelta(minutes=50)) is False

    workload.refresh_from_db()
    assert workload.wall_time_seconds == 600


@override_settings(CLUSTER_BACKEND="external")
def test_given_cluster_reports_a_later_start_then_the_admission_interval_starts_there():
    cq = make_cluster_queue(cpu="4")
    lq = make_local_queue("team-a", "main", cq)
    workload = submit(lq, "job", duration=None)
    t0 = timezone.now() - timedelta(hours=1)
    admit_all(cq, t0)

    assert cluster.record_starts({workload.id: t0 + timedelta(seconds=3)}) == [workload.id]

    workload.refresh_from_db()
    assert workload.admitted_at == workload.started_at == t0 + timedelta(seconds=3)
    assert AdmissionRecord.objects.get().admitted_at == t0 + timedelta(seconds=3)
    assert cluster.record_starts({workload.id: t0 + timedelta(seconds=9)}) == []  # a start is recorded once


@override_settings(CLUSTER_BACKEND="external")
def test_given_a_budget_run_before_the_start_is_known_then_it_charges_nothing_and_the_start_moves_the_interval():
    from budgets.models import Budget, BudgetCharge
    from budgets.services import reconcile_budget

    cq = make_cluster_queue(cpu="4")
    lq = make_local_queue("team-a", "main", cq)
    budget = Budget.objects.create(
        name="hours", local_queue=lq, allocated_hours=10, anchor=timezone.now() - timedelta(days=1)
    )
    workload = submit(lq, "job", duration=None)
    t0 = timezone.now() - timedelta(hours=1)
    admit_all(cq, t0)
    reconcile_budget(budget.pk, now=t0 + timedelta(seconds=2))  # admitted, not started: nothing ran yet
    assert not BudgetCharge.objects.filter(budget=budget).exists()

    assert cluster.record_starts({workload.id: t0 + timedelta(seconds=3)}) == [workload.id]
    reconcile_budget(budget.pk, now=t0 + timedelta(seconds=10))

    workload.refresh_from_db()
    assert (workload.admitted_at, workload.started_at) == (t0 + timedelta(seconds=3),) * 2
    assert AdmissionRecord.objects.get().admitted_at == t0 + timedelta(seconds=3)
    assert list(BudgetCharge.objects.filter(budget=budget).values_list("unit_seconds", flat=True)) == [7]
