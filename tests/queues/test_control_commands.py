"""The control-loop management commands."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from queues.models import UsageSample, Workload, WorkloadState

pytestmark = pytest.mark.django_db


def test_given_demo_when_admission_pass_command_runs_then_work_is_admitted(demo):
    out = StringIO()
    call_command("admission_pass", stdout=out)
    assert "cohort:org: admitted" in out.getvalue()
    assert Workload.objects.filter(state=WorkloadState.ADMITTED).count() > 0


def test_given_unknown_unit_then_one_line_error_names_the_option(demo):
    with pytest.raises(CommandError, match="--unit: unknown admission unit 'cohort:nope'"):
        call_command("admission_pass", "--unit", "cohort:nope")


def test_given_demo_when_sample_command_runs_then_series_rows_are_written(demo):
    out = StringIO()
    call_command("sample_usage", stdout=out)
    assert UsageSample.objects.count() > 0
    assert "sampled" in out.getvalue()
