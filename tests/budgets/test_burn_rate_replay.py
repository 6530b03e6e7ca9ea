"""Issue 25, budget state: a burn rate that is the ledger's own arithmetic, a forecast that moves
only when that rate does, the highest alert threshold named, "at risk" only from the forecast,
and /metrics saying what the pages say.

The ledger is replayed: one-GPU jobs admitted and finished at known moments through the real
admission pass and transitions, the real accounting run at each check (PostgreSQL ledger).
The expected rates are computed here from the ledger rows themselves, with fractions.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from fractions import Fraction

import pytest
from django.test import override_settings
from django.urls import reverse
from prometheus_client.parser import text_string_to_metric_families

from budgets import selectors
from budgets.models import Budget, BudgetCharge, BudgetEvent
from tests.budgets.helpers import add_gpu_quota, admission_pass, at, budget, cluster, finish, reconcile, submit
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

GPU = "nvidia.com/gpu"
WINDOW_HOURS = 6


def ledger_rate_per_hour(budget_id: int, start: datetime, end: datetime) -> Fraction:
    """The ledger's own arithmetic: unit-seconds its lines charge for time inside ``[start, end)``
    (each line spread evenly over its span), per second of the window (= per hour, in hours)."""
    total = Fraction(0)
    for line in BudgetCharge.objects.filter(budget_id=budget_id):
        low, high = max(line.charged_from, start), min(line.charged_to, end)
        if high > low:
            span = Fraction((line.charged_to - line.charged_from) // timedelta(microseconds=1))
            total += Fraction(line.unit_seconds) * Fraction((high - low) // timedelta(microseconds=1)) / span
    return total / Fraction((end - start) // timedelta(microseconds=1)) * 1_000_000


def window_of(moment: datetime) -> tuple[datetime, datetime]:
    return max(at(), moment - timedelta(hours=WINDOW_HOURS)), moment


def gpu_jobs(lq, names: list[str]):
    return [submit(lq, name, requests={"cpu": "1", GPU: "1"}) for name in names]


@pytest.fixture
def gpu_budget():
    cq, lq = cluster("16")
    add_gpu_quota(cq, "8")
    gpus = budget(
        lq, name="gpu-hours", hours="100", kind=Budget.Kind.RESOURCE_HOURS, resource=GPU, renewal=Budget.Renewal.MONTHLY
    )
    return cq, lq, gpus


@override_settings(BUDGET_BURN_RATE_WINDOW_SECONDS=WINDOW_HOURS * 3600)
def test_given_a_replayed_ledger_then_the_rate_is_the_ledgers_arithmetic_and_the_forecast_moves_only_with_it(
    gpu_budget,
):
    cq, lq, gpus = gpu_budget
    # Three GPUs from 00:00; one of them ends at 08:00; two run on.
    first, *_ = gpu_jobs(lq, ["a", "b", "c"])
    admission_pass(cq, at())
    checks = [at(hours=h, minutes=m) for h in range(1, 17) for m in (0, 20, 40) if (h, m) != (8, 0)]
    statuses = {}
    for moment in checks:
        if moment == at(hours=8, minutes=20):
            finish(first, at(hours=8))
        statuses[moment] = reconcile(gpus, moment).status
        gpus.state.refresh_from_db()
        # The stored rate is what the ledger charged over the window per second of it, exactly
        # (to the nine places it keeps), and the rate shown is that per hour.
        expected = ledger_rate_per_hour(gpus.pk, *window_of(moment))
        stored = gpus.state.burn_rate
        assert stored == (Decimal(expected.numerator) / Decimal(expected.denominator)).quantize(Decimal("1e-9")), moment
        assert statuses[moment].burn_rate_per_hour == (stored * 3600 / 3600).quantize(Decimal("1e-6")), moment

    steady_three = [statuses[m] for m in checks if m < at(hours=8)]
    steady_two = [statuses[m] for m in checks if m >= at(hours=14)]
    ramping = [statuses[m] for m in checks if at(hours=8) < m < at(hours=14)]
    # While the rate is constant, so is the forecast: to the microsecond, at every run.
    assert {s.burn_rate_per_hour for s in steady_three} == {Decimal(3)}
    assert {s.forecast_exhausted_at for s in steady_three} == {at(seconds=120_000)}  # 100 h at 3 per hour: 33 h 20 min
    assert {s.burn_rate_per_hour for s in steady_two} == {Decimal(2)}
    assert {s.forecast_exhausted_at for s in steady_two} == {at(hours=46)}  # 36 h used at 14:00, 64 left at 2/h
    # When the window still holds the third GPU, the rate falls run by run, and the forecast moves with it.
    rates = [s.burn_rate_per_hour for s in ramping]
    assert rates == sorted(rates, reverse=True) and len(set(rates)) == len(rates)
    assert len({s.forecast_exhausted_at for s in ramping}) == len(ramping)
    # At 09:00 the window is 03:00-09:00: 5 h at 3 GPUs and 1 h at 2, i.e. 17 GPU-hours over 6 h.
    assert statuses[at(hours=9)].burn_rate_per_hour == Decimal("2.833333")
    # In steady state the rate is how fast "used" grows between two runs: the page's numbers agree.
    later, earlier = statuses[at(hours=16)], statuses[at(hours=15)]
    assert later.used_hours - earlier.used_hours == later.burn_rate_per_hour


@override_settings(BUDGET_BURN_RATE_WINDOW_SECONDS=WINDOW_HOURS * 3600)
def test_given_a_run_when_its_status_is_read_back_later_then_rate_and_forecast_are_the_runs_not_the_clocks(
    gpu_budget,
):
    cq, lq, gpus = gpu_budget
    gpu_jobs(lq, ["a", "b", "c"])
    admission_pass(cq, at())
    ran = reconcile(gpus, at(hours=2, minutes=17)).status
    gpus.refresh_from_db()

    read = selectors.budget_status(gpus)  # as every page, the API and /metrics read it

    assert (read.as_of, read.burn_rate_per_hour, read.forecast_exhausted_at, read.state, read.state_reason) == (
        ran.as_of,
        ran.burn_rate_per_hour,
        ran.forecast_exhausted_at,
        ran.state,
        ran.state_reason,
    )


@override_settings(BUDGET_BURN_RATE_WINDOW_SECONDS=WINDOW_HOURS * 3600)
def test_given_a_burst_that_ended_then_the_page_shows_the_window_arithmetic_and_what_runs_now(gpu_budget, client):
    cq, lq, gpus = gpu_budget
    jobs = gpu_jobs(lq, ["a", "b", "c", "d"])
    admission_pass(cq, at())
    for job in jobs[1:]:
        finish(job, at(hours=2))
    reconcile(gpus, at(hours=7))  # window 01:00-07:00: 1 h at 4 GPUs + 5 h at 1 = 9 GPU-hours

    client.force_login(UserFactory(is_staff=True))
    response = client.get(reverse("budgets:detail", args=["gpu-hours"]))

    burn = response.context["burn"]
    assert (burn.window_start, burn.window_end) == (at(hours=1), at(hours=7))
    assert (burn.charged_hours, burn.rate_per_hour, burn.now_per_hour) == (Decimal(9), Decimal("1.5"), Decimal(1))
    assert response.context["status"].burn_rate_per_hour == burn.rate_per_hour
    card = response.content.decode().split('id="burn-rate"')[1].split("</div></div>")[0]
    assert "9 charged over the last 6 h (2026-03-01 01:00 UTC to 2026-03-01 07:00 UTC)" in card
    assert "1 per hour running now" in card


def _reach(lq, cq, gpus, *, hours_used: float, running_after: bool, thresholds: list[int]) -> datetime:
    """One GPU from 00:00 on a 40 h monthly budget until ``hours_used`` GPU-hours are used; then
    the job finishes, or runs on. Returns that moment."""
    gpus.allocated_hours = Decimal(40)
    gpus.alert_thresholds = thresholds
    gpus.renewal = Budget.Renewal.MONTHLY
    gpus.save()
    (job,) = gpu_jobs(lq, ["worker"])
    admission_pass(cq, at())
    end = at(hours=hours_used)
    if not running_after:
        finish(job, end)
    return end


QUIET = timedelta(hours=WINDOW_HOURS + 1)  # long enough after the job that the burn window is empty


def test_given_97_percent_used_then_the_reason_names_the_highest_threshold_crossed_as_the_alerts_did(gpu_budget):
    cq, lq, gpus = gpu_budget
    end = _reach(lq, cq, gpus, hours_used=38.96, running_after=False, thresholds=[50, 80, 100])

    status = reconcile(gpus, end + timedelta(minutes=30)).status

    assert status.percent == pytest.approx(97.4)
    fired = set(
        BudgetEvent.objects.filter(budget=gpus, kind=BudgetEvent.Kind.THRESHOLD).values_list("threshold", flat=True)
    )
    assert fired == {Decimal(50), Decimal(80)}
    assert "past its 80% alert threshold" in status.state_reason
    assert "50%" not in status.state_reason


def test_given_a_threshold_crossed_but_no_forecast_to_run_out_then_the_state_is_ok_and_says_why(gpu_budget):
    # 97.4% used, nothing has run for longer than the burn window: it will not run out before it resets.
    cq, lq, gpus = gpu_budget
    end = _reach(lq, cq, gpus, hours_used=38.96, running_after=False, thresholds=[50, 80, 100])

    status = reconcile(gpus, end + QUIET).status

    assert (status.state, status.burn_rate_per_hour, status.forecast_exhausted_at) == ("ok", 0, None)
    assert status.state_reason == "past its 80% alert threshold; not forecast to run out before the period resets"


def test_given_a_low_use_budget_forecast_to_run_out_then_it_is_at_risk_from_the_forecast_alone(gpu_budget):
    # 12% used (4.8 of 40 h) with one GPU still running: at 1 GPU-hour per hour it runs out long
    # before the month resets. No threshold is crossed: the forecast alone makes it at risk.
    cq, lq, gpus = gpu_budget
    end = _reach(lq, cq, gpus, hours_used=4.8, running_after=True, thresholds=[50, 80, 100])

    status = reconcile(gpus, end).status

    assert status.percent == pytest.approx(12.0)
    assert (status.state, status.alert_crossed) == ("at_risk", None)
    assert (
        status.state_reason == "forecast to run out before the period resets, at its burn rate of 1 GPU-hours per hour"
    )
    assert status.forecast_exhausted_at == end + timedelta(hours=35.2)
    assert status.forecast_exhausted_at < status.period_end


def test_given_a_low_use_budget_past_a_low_threshold_but_not_burning_then_it_is_not_at_risk(gpu_budget):
    cq, lq, gpus = gpu_budget
    end = _reach(lq, cq, gpus, hours_used=4.8, running_after=False, thresholds=[10, 80])

    status = reconcile(gpus, end + QUIET).status

    assert (status.state, status.alert_crossed) == ("ok", 10.0)


def _at_risk_gauges(client) -> dict[str, float]:
    body = client.get(reverse("metrics")).content.decode()
    return {
        sample.labels["budget"]: sample.value
        for family in text_string_to_metric_families(body)
        for sample in family.samples
        if sample.name == "fairportal_budget_at_risk"
    }


def test_given_budgets_in_each_state_then_the_at_risk_gauge_is_the_pages_state(client):
    cases = {
        "burning": ({"hours_used": 4.8, "running_after": True, "thresholds": [50, 80, 100]}, timedelta(0)),
        "past-80": ({"hours_used": 38.96, "running_after": False, "thresholds": [50, 80, 100]}, QUIET),
    }
    for index, (name, (case, after)) in enumerate(cases.items()):
        cq, lq = cluster("16", namespace=f"team-{index}")
        add_gpu_quota(cq, "8")
        gpus = budget(lq, name=name, hours="40", kind=Budget.Kind.RESOURCE_HOURS, resource=GPU)
        end = _reach(lq, cq, gpus, **case)
        reconcile(gpus, end + after)

    gauges = _at_risk_gauges(client)

    states = {b.name: selectors.budget_status(b).state for b in Budget.objects.all()}
    assert states == {"burning": "at_risk", "past-80": "ok"}
    assert gauges == {name: 1.0 if state == "at_risk" else 0.0 for name, state in states.items()}
