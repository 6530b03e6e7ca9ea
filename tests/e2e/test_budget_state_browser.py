"""Issue 25 in a real Chromium: a budget's page says why it is in its state (the forecast, and the
highest alert threshold reached) and shows the burn rate's arithmetic; a playground run's cards
say what they are over and give the figures while contended; its budget rows compare replay with
replay."""

from __future__ import annotations

from decimal import Decimal

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.urls import reverse

from budgets.models import Budget
from budgets.services import reconcile_all_budgets
from playground.models import Run
from playground.services import runs
from playground.services.scenarios import create_from_document
from tests.e2e.test_dashboard_browser import sign_in
from tests.playground.test_headlines import EDIT, SCENARIO
from tests.queues.views.cluster import build_cluster

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def cluster(transactional_db, quiet_broker, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return build_cluster(history_hours=3)


def test_given_a_budget_past_80_percent_and_burning_then_its_page_says_why_and_shows_the_rates_arithmetic(
    cluster, page, screenshot
):
    # Given: a-gpu-hours at 85% of a lowered allocation (thresholds 80 and 100), its work still running.
    budget = Budget.objects.get(name="a-gpu-hours")
    reconcile_all_budgets()
    used = budget.state.used_unit_seconds / Decimal(3600)
    budget.allocated_hours = (used / Decimal("0.85")).quantize(Decimal("0.001"))
    budget.alert_thresholds = [50, 80, 100]
    budget.save()
    reconcile_all_budgets()
    sign_in(page, "admin")

    page.goto(reverse("budgets:detail", args=["a-gpu-hours"]))

    reason = page.locator("#state-reason").inner_text()
    assert reason.startswith("At risk: forecast to run out before the period resets")
    assert "past its 80% alert threshold" in reason and "50%" not in reason
    burn = page.locator("#burn-rate").inner_text()
    assert "charged over the last" in burn and "running now" in burn
    screenshot("budget-state-reason")


def test_given_a_finished_run_then_its_cards_say_what_they_are_over_and_show_contended_figures(
    cluster, page, screenshot, monkeypatch
):
    from playground import tasks

    monkeypatch.setattr(tasks.run_playground, "delay", lambda run_id: None)  # executed inline below
    admin = get_user_model().objects.get(username="admin")
    scenario = create_from_document(yaml.safe_load(SCENARIO), owner=admin)
    run = runs.execute_run(runs.start_run(scenario, edits=[EDIT], owner=admin).pk)
    assert run.status == Run.Status.SUCCEEDED, run.error
    sign_in(page, "admin")

    page.goto(reverse("playground:run", args=[run.pk]))

    utilisation = page.locator("[data-kpi='utilization.cpu']").inner_text()
    assert "averaged over the 10 h simulation" in utilisation
    assert "while contended: 100.0%" in utilisation
    waits = page.locator("[data-kpi='wait.p50']").inner_text()
    assert "every workload submitted in the 10 h simulation" in waits and "while contended: 1 h" in waits
    assert all(
        "10 h simulation" in card.inner_text() for card in page.locator("[data-kpi]").all()
    )  # no card without its window
    assert "2 h of the baseline (20%)" in page.locator("#contention").inner_text()
    screenshot("playground-headlines")
