"""``manage.py reconcile_budgets`` runs the beat task's cycle by hand."""

from io import StringIO

import pytest
from django.core.management import call_command

from budgets.models import BudgetCharge
from tests.budgets.helpers import admission_pass, at, budget, cluster, submit

pytestmark = pytest.mark.django_db


def test_given_a_running_workload_then_the_command_charges_it_and_reports_the_budget():
    cq, lq = cluster()
    budget(lq, hours="1")
    submit(lq, "job")
    admission_pass(cq, at())
    out = StringIO()

    call_command("reconcile_budgets", stdout=out)

    assert BudgetCharge.objects.count() == 1
    assert out.getvalue().startswith("team-budget: ")
    assert "1 new ledger lines, hold placed" in out.getvalue()  # T0 is long past: the hour is used up


def test_given_an_unknown_budget_name_then_the_command_names_the_option():
    err = StringIO()

    with pytest.raises(SystemExit):
        call_command("reconcile_budgets", "--budget", "nope", stderr=err)

    assert "--budget: no budget named 'nope'" in err.getvalue()
