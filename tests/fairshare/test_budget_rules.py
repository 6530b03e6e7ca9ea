"""The budget rule (``fairshare.usage.budgets``): pure worked examples, no database.

Live budgets pass exact Decimal unit-seconds, the simulator float hours; both get the same answers.
"""

from decimal import Decimal

import pytest

from fairshare.errors import ValidationError
from fairshare.types import STOP_HOLD, STOP_HOLD_AND_DRAIN, STOP_NONE
from fairshare.usage import budgets as rules

HOUR = Decimal(3600)
GPU = "nvidia.com/gpu"


# --- what a workload charges -----------------------------------------------------------------


def test_given_a_wall_time_budget_then_a_workload_charges_one_unit_whatever_it_requests():
    assert rules.charge_quantity(rules.WALL_TIME, {"cpu": 64_000, GPU: 8000}) == rules.WALL_TIME_QUANTITY == 1000
    assert rules.charge_quantity(rules.WALL_TIME, {}) == 1000


def test_given_a_gpu_hours_budget_then_a_workload_charges_its_gpu_request_on_the_budget_flavor_only():
    requests = {"cpu": 8000, GPU: 4000}  # 4 GPUs, in millis
    gpu_hours = {"resource": GPU, "flavor": "a100"}
    assert rules.charge_quantity(rules.RESOURCE_HOURS, requests, resource=GPU) == 4000
    assert rules.charge_quantity(rules.RESOURCE_HOURS, requests, **gpu_hours, assignment={GPU: "a100"}) == 4000
    assert rules.charge_quantity(rules.RESOURCE_HOURS, requests, **gpu_hours, assignment={GPU: "h100"}) == 0
    assert rules.charge_quantity(rules.RESOURCE_HOURS, requests, **gpu_hours, assignment={}) == 0
    # Not placed yet (safe admission, a pending workload): the request counts, the worst case.
    assert rules.charge_quantity(rules.RESOURCE_HOURS, requests, **gpu_hours, assignment=None) == 4000
    assert rules.charge_quantity(rules.RESOURCE_HOURS, {"cpu": 8000}, resource=GPU) == 0


def test_given_an_unknown_kind_or_no_resource_then_the_charge_is_refused_naming_the_field():
    with pytest.raises(ValidationError, match="kind"):
        rules.charge_quantity("GPUHours", {GPU: 1000}, resource=GPU)
    with pytest.raises(ValidationError, match="resource"):
        rules.charge_quantity(rules.RESOURCE_HOURS, {GPU: 1000})


def test_given_four_gpus_for_ninety_minutes_then_they_charge_six_gpu_hours():
    quantity = rules.charge_quantity(rules.RESOURCE_HOURS, {GPU: 4000}, resource=GPU)
    assert rules.worst_case(quantity, Decimal(5400)) == 6 * HOUR  # GPU-seconds


# --- exhausted or not --------------------------------------------------------------------------


def test_given_a_wall_time_budget_at_99_9_percent_then_it_is_not_exhausted_and_at_100_percent_it_is():
    allocated = 10 * HOUR  # 10 hours, in unit-seconds
    assert not rules.exhausted(Decimal("35964"), allocated)  # 9.99 hours: 99.9%
    assert not rules.exhausted(Decimal("35999.999999"), allocated)  # exact: no rounding to hours
    assert rules.exhausted(Decimal("36000"), allocated)  # 100%: used >= allocated
    assert rules.exhausted(Decimal("36000.000001"), allocated)


def test_given_float_hours_then_the_slack_absorbs_integration_error_only():
    assert rules.exhausted(9.9999999999, 10.0, slack=1e-9)
    assert not rules.exhausted(9.99, 10.0, slack=1e-9)
    assert not rules.exhausted(9.9999999999, 10.0)


def test_given_a_zero_allocation_then_the_budget_is_exhausted_from_the_start():
    assert rules.exhausted(Decimal(0), Decimal(0))


# --- which action follows ----------------------------------------------------------------------


def test_given_hold_and_drain_when_exhausted_then_the_target_is_held_and_drained():
    policy = rules.stop_policy(True, STOP_HOLD_AND_DRAIN)
    assert (policy, rules.drains(policy)) == (STOP_HOLD_AND_DRAIN, True)


def test_given_hold_when_exhausted_then_the_target_is_held_and_running_work_finishes():
    policy = rules.stop_policy(True, STOP_HOLD)
    assert (policy, rules.drains(policy)) == (STOP_HOLD, False)


def test_given_a_budget_not_exhausted_then_nothing_follows_whatever_its_action():
    for action in rules.BUDGET_ACTIONS:
        assert rules.stop_policy(False, action) == STOP_NONE
        assert not rules.drains(rules.stop_policy(False, action))


def test_given_an_unknown_action_then_it_is_refused():
    with pytest.raises(ValidationError, match="action"):
        rules.stop_policy(True, "Drain")


# --- when it runs out --------------------------------------------------------------------------


def test_given_a_burn_rate_then_exhaustion_comes_when_the_rest_is_used():
    # 4 of 10 GPU-hours used, 2 GPUs burning: 3 hours left.
    assert rules.seconds_to_exhaustion(4 * HOUR, 10 * HOUR, Decimal(2)) == 3 * HOUR
    assert rules.seconds_to_exhaustion(4.0, 10.0, 2.0 / 3600) == pytest.approx(3 * 3600)


def test_given_no_burn_then_no_crossing_and_given_none_left_then_it_is_now():
    assert rules.seconds_to_exhaustion(Decimal(1), Decimal(10), Decimal(0)) is None
    assert rules.seconds_to_exhaustion(1.0, 10.0, -1.0) is None
    assert rules.seconds_to_exhaustion(Decimal(12), Decimal(10), Decimal(1)) == 0
    assert rules.seconds_to_exhaustion(12.0, 10.0, 1.0) == 0.0


# --- safe admission ----------------------------------------------------------------------------


def test_given_a_max_runtime_that_fits_exactly_then_the_workload_is_admitted():
    available = 2 * HOUR  # 10 GPU-hours allocated, 8 used: 2 GPU-hours left
    need = rules.worst_case(1000, Decimal(7200))  # 1 GPU for at most 2 hours
    assert need == available
    assert not rules.overruns(need, available)


def test_given_a_max_runtime_that_overruns_by_one_second_then_the_workload_waits():
    available = 2 * HOUR
    need = rules.worst_case(1000, Decimal(7201))
    assert need == available + 1
    assert rules.overruns(need, available)


def test_given_the_period_ends_before_the_max_runtime_then_only_the_rest_of_the_period_counts():
    # 2 GPUs for at most 8 hours, but the period renews in 1 hour: 2 GPU-hours this period.
    assert rules.worst_case(2000, Decimal(8 * 3600), Decimal(3600)) == 2 * HOUR
    assert not rules.overruns(rules.worst_case(2000, Decimal(8 * 3600), Decimal(3600)), 2 * HOUR)
    assert rules.worst_case(2000, 8 * 3600.0, 3600.0) == 7200.0


def test_given_a_wall_time_budget_then_the_worst_case_is_the_max_runtime_itself():
    quantity = rules.charge_quantity(rules.WALL_TIME, {GPU: 8000})
    assert rules.worst_case(quantity, Decimal(1800)) == Decimal(1800)  # half an hour of wall time
