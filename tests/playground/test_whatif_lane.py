"""Playground runs in the what-if lane: the per-user cap on the API (429) and the page (form error),
shared with background simulations; time limits reported as such."""

from __future__ import annotations

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.db import connection
from django.urls import reverse

from playground.models import Run
from playground.services import runs
from playground.services.scenarios import create_from_preset
from tests.factories import simulation_run
from tests.playground.test_api import BASE, client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def volcano(admin):
    return create_from_preset("volcano-16cpu", owner=admin)


def test_given_a_user_at_the_cap_when_a_run_is_posted_then_429_and_nothing_stored(admin, volcano, settings, no_broker):
    settings.WHATIF_MAX_ACTIVE_PER_USER = 2
    simulation_run(admin)  # background /api/v1/simulations/ runs count too
    runs.start_run(volcano, edits=["clusterQueues.q2.weight=3"], owner=admin)

    response = client_for(admin).post(
        f"{BASE}/runs/", {"scenario": str(volcano.pk), "edits": ["clusterQueues.q2.weight=4"]}, format="json"
    )

    assert response.status_code == 429
    assert response.json()["code"] == "whatif_limit"
    assert Run.objects.count() == 2


def test_given_a_user_at_the_cap_when_running_from_the_page_then_a_form_error_names_the_cap(
    admin_client, admin_user, volcano, settings, no_broker
):
    settings.WHATIF_MAX_ACTIVE_PER_USER = 1
    runs.start_run(volcano, edits=["clusterQueues.q2.weight=3"], owner=admin_user)  # admin_client's user

    response = admin_client.post(
        reverse("playground:scenario", args=[volcano.pk]), {"extra": "clusterQueues.q2.weight=5", "title": ""}
    )

    assert response.status_code == 400
    assert "WHATIF_MAX_ACTIVE_PER_USER=1" in response.context["form"].non_field_errors()[0]
    assert Run.objects.count() == 1


def test_given_the_soft_time_limit_when_it_fires_during_a_simulation_then_the_run_failed_saying_so(
    admin, volcano, no_broker, monkeypatch, settings
):
    # The soft limit is a signal Celery raises inside the task; the real-worker test lets it fire,
    # here it is raised where the signal would land, to check what the run records.
    settings.WHATIF_SOFT_TIME_LIMIT_SECONDS = 42
    run = runs.start_run(volcano, edits=["clusterQueues.q2.weight=3"], owner=admin)

    def too_slow(*args, **kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(runs, "simulate", too_slow)
    runs.execute_run(run.pk)

    stored = Run.objects.get(pk=run.pk)
    assert stored.status == Run.Status.FAILED
    assert stored.error.startswith("stopped: the run took longer than 42 s (WHATIF_SOFT_TIME_LIMIT)")


@pytest.mark.django_db(transaction=True)  # the run's own connection, as in the worker (no test transaction)
def test_given_the_soft_time_limit_lands_while_a_query_is_in_flight_then_the_run_still_fails_saying_so(
    admin, volcano, no_broker, monkeypatch, settings
):
    # The signal can interrupt a progress write mid-query: the connection then refuses the next
    # command ("another command is already in progress") unless it is dropped first.
    settings.WHATIF_SOFT_TIME_LIMIT_SECONDS = 42
    run = runs.start_run(volcano, edits=["clusterQueues.q2.weight=3"], owner=admin)

    def interrupted(*args, **kwargs):
        connection.ensure_connection()
        connection.connection.pgconn.send_query(b"SELECT pg_sleep(0.2)")  # sent, its result never read
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(runs, "simulate", interrupted)
    runs.execute_run(run.pk)

    stored = Run.objects.get(pk=run.pk)
    assert stored.status == Run.Status.FAILED
    assert stored.error.startswith("stopped: the run took longer than 42 s (WHATIF_SOFT_TIME_LIMIT)")
