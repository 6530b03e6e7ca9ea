"""Budget periods and dates are bounded, and a budget whose accounting fails says ``error``, loudly.

Before: ``renewal_days: 2147483647`` was accepted and every later cycle raised OverflowError
while the budget kept showing "ok" (never enforced); a year-9999 or year-1 date with a monthly
renewal was "year 10000 is out of range" in background runs.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core.exceptions import ValidationError

from budgets import services
from budgets.models import Budget, BudgetEvent, BudgetState
from budgets.selectors import budget_status
from fairshare.errors import ValidationError as EngineValidationError
from fairshare.simulation.scenario import parse_scenario
from tests.budgets.helpers import at, budget, cluster

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"renewal": "days", "renewal_days": 2147483647}, "renewal_days"),
        ({"renewal": "days", "renewal_days": 3661}, "renewal_days"),
        ({"renewal": "monthly", "anchor": datetime(9999, 12, 15, tzinfo=UTC)}, "anchor"),
        ({"renewal": "monthly", "anchor": datetime(1, 1, 1, tzinfo=UTC)}, "anchor"),
    ],
    ids=["int32-days", "just-over", "year-9999", "year-1"],
)
def test_given_an_unbounded_period_or_date_then_clean_names_the_field(fields, field):
    _, lq = cluster()
    with pytest.raises(ValidationError) as error:
        budget(lq, **fields)
    assert list(error.value.message_dict) == [field]
    assert not Budget.objects.exists()


def test_the_longest_period_and_the_bounds_years_are_accepted():
    _, lq = cluster()
    budget(lq, renewal="days", renewal_days=3660, anchor=datetime(2200, 1, 1, tzinfo=UTC))
    budget(lq, name="old", renewal="monthly", anchor=datetime(1970, 1, 1, tzinfo=UTC))


def test_given_a_stored_row_that_predates_validation_then_the_budget_shows_error_and_alerts_once():
    _, lq = cluster()
    team = budget(lq, hours="5", name="team")
    Budget.objects.filter(pk=team.pk).update(renewal="days", renewal_days=2147483647)  # stored before the bound

    services.reconcile_all_budgets(now=at(hours=1))
    services.reconcile_all_budgets(now=at(hours=2))  # the same failure again: no second alert

    status = budget_status(Budget.objects.get(pk=team.pk))
    assert (status.state, status.level) == ("error", "bad")
    assert "accounting failed (OverflowError)" in status.state_reason
    events = BudgetEvent.objects.filter(budget=team)
    assert [e.kind for e in events] == ["AccountingFailed"]
    assert "not measured or enforced" in events[0].message

    Budget.objects.filter(pk=team.pk).update(renewal_days=30)  # fixed: the next cycle clears the error
    services.reconcile_all_budgets(now=at(hours=3))
    assert BudgetState.objects.get(budget=team).error == ""
    assert budget_status(Budget.objects.get(pk=team.pk)).state == "ok"


def _scenario(clock_start: str, **budget: object) -> dict:
    return {
        "name": "s",
        "clock": {"start": clock_start},
        "resourceFlavors": [{"name": "default"}],
        "clusterQueues": [{"name": "cq", "quotas": [{"flavor": "default", "resources": {"cpu": {"nominal": 4}}}]}],
        "namespaces": [{"name": "ns"}],
        "localQueues": [{"name": "ns/main", "clusterQueue": "cq"}],
        "budgets": [{"localQueue": "ns/main", "kind": "WallTime", "allocatedHours": 5, **budget}],
    }


@pytest.mark.parametrize(
    ("document", "field", "message"),
    [
        (_scenario("9999-12-15T00:00:00Z", renewal="monthly"), "clock.start", "between the years 1970 and 2200"),
        (_scenario("0001-01-01T00:00:00Z", renewal="monthly"), "clock.start", "between the years 1970 and 2200"),
        (
            _scenario("2026-01-01T00:00:00Z", renewal="monthly", anchor="9999-01-01T00:00:00Z"),
            "budgets[0].anchor",
            "between the years",
        ),
        (
            _scenario("2026-01-01T00:00:00Z", renewal="days", renewalDays=2147483647),
            "budgets[0].renewalDays",
            "at most 3660",
        ),
    ],
    ids=["clock-9999", "clock-1", "anchor-9999", "renewal-days"],
)
def test_the_scenario_loader_enforces_the_same_bounds(document, field, message):
    with pytest.raises(EngineValidationError) as error:
        parse_scenario(document)
    assert (error.value.field, message in error.value.message) == (field, True)
