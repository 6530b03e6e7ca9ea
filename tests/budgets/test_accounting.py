"""The ledger: charges derived from admission intervals, exact to the microsecond (KEP-28)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db.models import Sum

from budgets.models import Budget, BudgetCharge
from fairshare.quantities import parse_millis
from queues.models import AdmissionRecord, ClusterQueueQuota, ResourceFlavor
from queues.services import cluster as cluster_service
from tests.budgets.helpers import T0, admission_pass, at, budget, cluster, evict, finish, reconcile, submit
from tests.queues.loop_fixtures import make_local_queue

pytestmark = pytest.mark.django_db


def charged_seconds(target: Budget) -> Decimal:
    return BudgetCharge.objects.filter(budget=target).aggregate(total=Sum("unit_seconds"))["total"] or Decimal(0)


def test_given_a_10_minute_job_then_it_counts_10_minutes_not_a_whole_hour():
    cq, lq = cluster()
    team = budget(lq, hours="1")
    job = submit(lq, "short")
    admission_pass(cq, at(minutes=1))
    finish(job, at(minutes=11))

    result = reconcile(team, at(hours=3))

    assert charged_seconds(team) == Decimal(600)
    assert result.status.used_hours == Decimal("0.166667")
    assert result.status.percent == 16.67


def test_given_cpu_and_memory_requests_on_four_pods_then_wall_time_counts_the_workload_once():
    cq, lq = cluster(cpu="16", memory="64Gi")
    team = budget(lq, hours="10")
    job = submit(lq, "multi", requests={"cpu": "2", "memory": "8Gi"}, count=4)
    admission_pass(cq, at())
    finish(job, at(hours=1))

    result = reconcile(team, at(hours=2))

    assert result.status.used_hours == Decimal("1.000000")
    line = BudgetCharge.objects.get(budget=team)
    assert line.quantity == 1000  # one workload, not 8 CPUs or 32Gi


def test_given_evict_and_readmit_then_charged_time_accumulates_exactly_across_admissions():
    cq, lq = cluster()
    team = budget(lq, hours="5")
    job = submit(lq, "restarted")
    admission_pass(cq, at())
    reconcile(team, at(minutes=7))  # a run while the first admission is open
    evict(job, at(minutes=20))
    admission_pass(cq, at(minutes=25))
    reconcile(team, at(minutes=40))
    finish(job, at(minutes=55, seconds=30, microseconds=250))

    reconcile(team, at(hours=2))

    assert charged_seconds(team) == Decimal("3030.000250")  # 20 min + 30 min 30.00025 s
    assert cluster_service.total_wall_time_seconds(job.pk) == 3030
    assert set(BudgetCharge.objects.filter(budget=team).values_list("admission_record_id", flat=True)) == set(
        AdmissionRecord.objects.filter(workload=job).values_list("id", flat=True)
    )


def test_given_a_workload_running_across_a_period_boundary_then_each_period_is_charged_its_part():
    cq, lq = cluster()
    team = budget(lq, hours="100", renewal=Budget.Renewal.MONTHLY)  # periods start on the 1st
    job = submit(lq, "overnight")
    admission_pass(cq, T0 + timedelta(days=30, hours=22))  # 31 March 22:00
    finish(job, T0 + timedelta(days=31, hours=3))  # 1 April 03:00

    reconcile(team, T0 + timedelta(days=31, hours=4))

    by_period = dict(
        BudgetCharge.objects.filter(budget=team).values_list("period_start").annotate(total=Sum("unit_seconds"))
    )
    assert by_period == {T0: Decimal(7200), T0 + timedelta(days=31): Decimal(10800)}


def test_given_a_running_workload_then_each_run_appends_only_the_new_stretch():
    cq, lq = cluster()
    team = budget(lq, hours="10")
    submit(lq, "long")
    admission_pass(cq, at())

    first = reconcile(team, at(minutes=30))
    second = reconcile(team, at(minutes=45))

    assert (first.lines, second.lines) == (1, 1)
    lines = list(BudgetCharge.objects.filter(budget=team).values_list("charged_from", "charged_to"))
    assert lines == [(at(), at(minutes=30)), (at(minutes=30), at(minutes=45))]


def test_given_accounting_run_twice_at_the_same_moment_then_nothing_more_is_charged():
    cq, lq = cluster()
    team = budget(lq, hours="10")
    done, running = submit(lq, "done"), submit(lq, "running")
    admission_pass(cq, at())
    finish(done, at(minutes=10))
    reconcile(team, at(hours=1))
    before = list(BudgetCharge.objects.values_list("id", "unit_seconds"))

    again = reconcile(team, at(hours=1))

    assert again.lines == 0
    assert list(BudgetCharge.objects.values_list("id", "unit_seconds")) == before
    assert running.pk  # still open: charged to the run's moment, no further


def test_given_a_finish_reported_with_an_earlier_time_than_already_charged_then_a_correction_credits_it_back():
    cq, lq = cluster()
    team = budget(lq, hours="10")
    job = submit(lq, "late-report")
    admission_pass(cq, at())
    reconcile(team, at(minutes=50))  # the job looked alive until 00:50
    finish(job, at(minutes=30))  # ...but its executor reports it ended at 00:30

    result = reconcile(team, at(hours=1))

    assert result.corrections == 1
    correction = BudgetCharge.objects.get(budget=team, kind=BudgetCharge.Kind.CORRECTION)
    assert (correction.charged_from, correction.charged_to, correction.unit_seconds) == (
        at(minutes=30),
        at(minutes=50),
        Decimal(-1200),
    )
    assert charged_seconds(team) == Decimal(1800)
    assert reconcile(team, at(hours=2)).lines == 0  # settled: no further lines


def test_given_a_finish_reported_at_the_admission_moment_after_a_run_then_the_whole_charge_is_credited_back():
    cq, lq = cluster()
    team = budget(lq, hours="10")
    job = submit(lq, "never-ran")
    admission_pass(cq, at())
    reconcile(team, at(minutes=5))
    finish(job, at())  # a zero-length admission

    reconcile(team, at(minutes=6))

    assert charged_seconds(team) == 0
    assert reconcile(team, at(minutes=7)).lines == 0


def test_given_an_interval_that_started_before_the_anchor_then_only_the_part_after_it_is_charged():
    cq, lq = cluster()
    job = submit(lq, "early")
    admission_pass(cq, at(hours=-2))
    team = budget(lq, hours="10")  # anchored at T0
    finish(job, at(hours=1))

    reconcile(team, at(hours=2))

    assert charged_seconds(team) == Decimal(3600)


def test_given_namespace_and_cluster_queue_budgets_then_each_counts_the_intervals_of_its_target():
    cq, lq_a = cluster(cpu="16")
    lq_b = make_local_queue("team-b", "main", cq)
    lq_a2 = make_local_queue("team-a", "batch", cq)
    ns_budget = budget(lq_a.namespace, name="ns", hours="10", namespace=lq_a.namespace, local_queue=None)
    cq_budget = budget(cq, name="cq", hours="10", cluster_queue=cq)
    for lq in (lq_a, lq_b, lq_a2):
        submit(lq, f"job-{lq.name}-{lq.namespace.name}")
    admission_pass(cq, at())

    reconcile(ns_budget, at(hours=1))
    reconcile(cq_budget, at(hours=1))

    assert charged_seconds(ns_budget) == Decimal(7200)  # team-a/main and team-a/batch
    assert charged_seconds(cq_budget) == Decimal(10800)  # all three


def test_given_a_gpu_hours_budget_on_one_flavor_then_only_requests_placed_on_that_flavor_count():
    cq, lq = cluster()
    a100, h100 = ResourceFlavor.objects.create(name="a100"), ResourceFlavor.objects.create(name="h100")
    for order, (flavor, gpus) in enumerate(((a100, "2"), (h100, "4")), start=1):  # a100 is tried first
        ClusterQueueQuota.objects.create(
            cluster_queue=cq, flavor=flavor, flavor_order=order, resource="nvidia.com/gpu", nominal=parse_millis(gpus)
        )
    all_gpus = budget(lq, name="all-gpus", hours="100", kind=Budget.Kind.RESOURCE_HOURS, resource="nvidia.com/gpu")
    a100_only = budget(
        lq, name="a100-gpus", hours="100", kind=Budget.Kind.RESOURCE_HOURS, resource="nvidia.com/gpu", flavor=a100
    )
    first = submit(lq, "train-1", requests={"cpu": "1", "nvidia.com/gpu": "2"})
    second = submit(lq, "train-2", requests={"cpu": "1", "nvidia.com/gpu": "2"})
    submit(lq, "cpu-only")
    admission_pass(cq, at())
    first.refresh_from_db()
    second.refresh_from_db()
    assert {first.flavor_assignment["nvidia.com/gpu"], second.flavor_assignment["nvidia.com/gpu"]} == {"a100", "h100"}

    reconcile(all_gpus, at(hours=3))
    reconcile(a100_only, at(hours=3))

    assert charged_seconds(all_gpus) == Decimal(2 * 2 * 3 * 3600)  # 12 GPU-hours
    assert charged_seconds(a100_only) == Decimal(2 * 3 * 3600)  # 6 GPU-hours
    assert reconcile(all_gpus, at(hours=3)).status.used_hours == Decimal(12)
