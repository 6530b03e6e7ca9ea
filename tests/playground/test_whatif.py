"""The what-if lane's housekeeping: the reaper fails runs stuck past their limits, retention prunes
old finished runs (not applied ones), and the tasks are routed off the control loop's queue."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from fairportal.celery import app
from playground.models import Application, Outcome, Run, Scenario
from playground.services import lane
from playground.services.scenarios import create_from_preset
from tests.factories import UserFactory, simulation_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return UserFactory(username="whatif-owner")


def simulation(owner, status: str, *, age: timedelta, started: timedelta | None = None) -> Run:
    """A /api/v1/simulations/ run (a playground run with no edits)."""
    run = simulation_run(owner, status=status)
    now = timezone.now()
    Run.objects.filter(pk=run.pk).update(created_at=now - age, started_at=None if started is None else now - started)
    return run


def playground_run(owner, status: str, *, age: timedelta, started: timedelta | None = None) -> Run:
    scenario = create_from_preset("volcano-16cpu", owner=owner)
    run = Run.objects.create(scenario=scenario, owner=owner, edits=["clusterQueues.q2.weight=3"], status=status)
    now = timezone.now()
    Run.objects.filter(pk=run.pk).update(created_at=now - age, started_at=None if started is None else now - started)
    return run


def test_given_runs_past_their_limits_when_reaped_then_they_fail_saying_why_and_fresh_ones_stay(owner, settings):
    settings.WHATIF_TIME_LIMIT_SECONDS = 600
    settings.WHATIF_QUEUED_TIMEOUT_SECONDS = 3600
    killed = simulation(owner, "running", age=timedelta(minutes=20), started=timedelta(minutes=12))
    busy = simulation(owner, "running", age=timedelta(minutes=20), started=timedelta(minutes=5))
    lost = playground_run(owner, "queued", age=timedelta(hours=2))
    waiting = playground_run(owner, "queued", age=timedelta(minutes=10))

    reaped = lane.reap_stuck_runs()

    assert (reaped.running, reaped.queued) == (1, 1)
    killed.refresh_from_db()
    assert killed.status == "failed" and "600 s hard limit (WHATIF_TIME_LIMIT)" in killed.error
    lost.refresh_from_db()
    assert lost.status == "failed" and "WHATIF_QUEUED_TIMEOUT" in lost.error and lost.finished_at
    assert Run.objects.get(pk=busy.pk).status == "running"
    assert Run.objects.get(pk=waiting.pk).status == "queued"
    assert lane.reap_stuck_runs() == lane.Reaped(running=0, queued=0)  # twice is harmless


def test_given_old_finished_runs_when_pruned_then_they_go_except_applied_and_unfinished_ones(owner, settings):
    settings.WHATIF_RESULT_RETENTION_SECONDS = 7 * 86400
    old, recent = timedelta(days=8), timedelta(days=1)
    old_simulation = simulation(owner, "succeeded", age=old)
    old_running = simulation(owner, "running", age=old, started=old)
    recent_simulation = simulation(owner, "failed", age=recent)
    old_run = playground_run(owner, "succeeded", age=old)
    outcome = Outcome.objects.create(scenario=old_run.scenario, edits_key="k", data={}, seconds=1.0)
    Outcome.objects.filter(pk=outcome.pk).update(created_at=timezone.now() - old)
    Run.objects.filter(pk=old_run.pk).update(baseline=outcome)
    applied = playground_run(owner, "succeeded", age=old)
    Application.objects.create(run=applied, actor=owner, actor_name=owner.username)

    deleted = lane.prune_finished_runs()

    assert deleted == 2
    assert set(Run.objects.values_list("pk", flat=True)) == {old_running.pk, recent_simulation.pk, applied.pk}
    assert not Run.objects.filter(pk=old_simulation.pk).exists()
    assert not Scenario.objects.filter(pk=old_simulation.scenario_id).exists()  # a posted scenario goes with its run
    assert not Outcome.objects.filter(pk=outcome.pk).exists()


def test_what_if_tasks_are_routed_to_their_own_queue_with_time_limits():
    app.loader.import_default_modules()  # what a worker does at start: every task module
    for name in ("playground.run",):  # /api/v1/simulations/ runs are playground runs
        assert app.amqp.router.route({}, name)["queue"].name == "whatif"
        task = app.tasks[name]
        assert (task.soft_time_limit, task.time_limit) == (
            django_settings.WHATIF_SOFT_TIME_LIMIT_SECONDS,
            django_settings.WHATIF_TIME_LIMIT_SECONDS,
        )
    for name in ("queues.admission_pass", "queues.schedule_admission_passes", "budgets.reconcile_budgets"):
        assert app.amqp.router.route({}, name)["queue"].name == "celery"
