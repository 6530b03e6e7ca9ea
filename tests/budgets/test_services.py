"""Budget changes through services: validated (errors name the field) and audited."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from budgets import services
from budgets.models import Budget
from core.models import PolicyChange
from tests.budgets.helpers import admission_pass, at, budget, cluster, reconcile, submit

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"allocated_hours": Decimal(-1)}, "allocated_hours"),
        ({"alert_thresholds": [80, "ninety"]}, "alert_thresholds"),
        ({"alert_emails": "lead@example.org, not-an-address"}, "alert_emails"),
        ({"renewal": "days", "renewal_days": None}, "renewal_days"),
        ({"kind": "ResourceHours"}, "resource"),
    ],
)
def test_given_bad_input_when_updating_then_the_error_names_the_field_and_nothing_changes(changes, field):
    _, lq = cluster()
    team = budget(lq, hours="5", name="team")

    with pytest.raises(ValidationError) as error:
        services.update_budget(team, **changes)

    assert field in error.value.message_dict
    assert Budget.objects.get(pk=team.pk).allocated_hours == Decimal(5)
    assert not PolicyChange.objects.filter(action="update").exists()


def test_given_charges_when_changing_what_the_budget_measures_then_it_is_refused_naming_the_field():
    cq, lq = cluster()
    other = cluster(namespace="team-b")[1]
    team = budget(lq, hours="5", name="team")
    submit(lq, "job")
    admission_pass(cq, at())
    reconcile(team, at(minutes=10))

    with pytest.raises(ValidationError) as error:
        services.update_budget(team, local_queue=other)

    assert "create a new budget instead" in error.value.message_dict["local_queue"][0]
    services.update_budget(team, allocated_hours=Decimal(8), renewal="weekly")  # allocation and renewal may change


def test_given_an_unknown_field_when_updating_then_it_is_named():
    _, lq = cluster()
    team = budget(lq, hours="5", name="team")

    with pytest.raises(ValueError, match="colour: not a budget field"):
        services.update_budget(team, colour="blue")


def test_given_a_renewal_change_after_charges_then_the_new_period_counts_only_its_own_time():
    cq, lq = cluster()
    team = budget(lq, hours="100", name="team")
    submit(lq, "job")
    admission_pass(cq, at())
    reconcile(team, at(hours=30))  # one line, [00:00 day 1, 06:00 day 2)

    services.update_budget(team, renewal="days", renewal_days=1)
    status = reconcile(team, at(hours=31)).status

    assert status.period_start == at(hours=24)
    assert status.used_hours == Decimal(7)  # 06:00 of the old line plus the new hour, clipped to the day
