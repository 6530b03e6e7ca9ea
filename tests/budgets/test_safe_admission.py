"""Safe admission: a workload with a maximum runtime starts only if its worst case fits."""

from __future__ import annotations

import pytest

from budgets.models import Budget
from core import extensions
from queues.admission.gates import ADMISSION_GATES
from queues.models import WorkloadState
from tests.budgets.helpers import add_gpu_quota, admission_pass, at, budget, cluster, reconcile, state_of, submit

pytestmark = pytest.mark.django_db


def test_given_safe_admission_then_a_worst_case_that_does_not_fit_waits_and_smaller_ones_still_start():
    cq, lq = cluster()
    budget(lq, hours="2", safe_admission=True)
    big = submit(lq, "big", max_runtime=90 * 60)  # worst case 1.5 h
    too_big = submit(lq, "too-big", max_runtime=60 * 60)  # 1 h: only 0.5 h left after big
    small = submit(lq, "small", max_runtime=20 * 60)  # fits in the 0.5 h
    unbounded = submit(lq, "unbounded")  # no maximum runtime: no worst case to check

    admission_pass(cq, at())

    assert [state_of(w) for w in (big, too_big, small, unbounded)] == [
        WorkloadState.ADMITTED,
        WorkloadState.PENDING,
        WorkloadState.ADMITTED,
        WorkloadState.ADMITTED,
    ]
    too_big.refresh_from_db()
    assert too_big.pending_reason_code == "BudgetInsufficient"
    assert too_big.pending_reason_message == (
        "safe admission: up to 1 hours at its maximum runtime of 3600s, but budget team-budget has 0.5 of 2 left "
        "this period"
    )
    assert too_big.queue_position is None


def test_given_charged_time_and_running_worst_cases_then_only_what_is_truly_left_is_offered():
    cq, lq = cluster()
    team = budget(lq, hours="2", safe_admission=True)
    submit(lq, "first", max_runtime=3600)
    admission_pass(cq, at())
    reconcile(team, at(minutes=30))  # 0.5 h charged; first may still run 0.5 h
    waiting = submit(lq, "second", max_runtime=3600)

    admission_pass(cq, at(minutes=40))  # 2 - 0.5 charged - 10 min unaccounted - 20 min ahead = 1 h
    assert state_of(waiting) == WorkloadState.ADMITTED


def test_given_safe_admission_off_then_max_runtime_does_not_gate():
    cq, lq = cluster()
    budget(lq, hours="1", safe_admission=False)
    job = submit(lq, "long", max_runtime=10 * 3600)

    admission_pass(cq, at())

    assert state_of(job) == WorkloadState.ADMITTED


def test_given_a_gpu_budget_then_the_worst_case_counts_the_requested_gpus():
    cq, lq = cluster()
    add_gpu_quota(cq, "8")
    budget(lq, name="gpus", hours="10", kind=Budget.Kind.RESOURCE_HOURS, resource="nvidia.com/gpu", safe_admission=True)
    eight_gpus = submit(lq, "eight", requests={"cpu": "1", "nvidia.com/gpu": "8"}, max_runtime=2 * 3600)  # 16 GPU-h
    cpu_only = submit(lq, "cpu-only", max_runtime=100 * 3600)  # charges no GPU-hours

    admission_pass(cq, at())

    assert (state_of(eight_gpus), state_of(cpu_only)) == (WorkloadState.PENDING, WorkloadState.ADMITTED)


def test_given_no_gate_registered_then_the_pass_plans_everything_as_before():
    cq, lq = cluster()
    budget(lq, hours="0.1", safe_admission=True)
    job = submit(lq, "long", max_runtime=3600)
    registered = extensions.items(ADMISSION_GATES)
    for name, _ in registered:
        extensions.unregister(ADMISSION_GATES, name)
    try:
        admission_pass(cq, at())
    finally:
        for name, gate in registered:
            extensions.register(ADMISSION_GATES, name, gate)

    assert state_of(job) == WorkloadState.ADMITTED
