"""What a user stores in the what-if lane is bounded: scenarios (every source), runs and bytes,
each refused with the setting named (429 from the API, a form error on the page); scenarios with
no run are pruned after ``WHATIF_SCENARIO_RETENTION`` whatever their source."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from playground.models import Application, Run, Scenario
from playground.services import lane, runs
from playground.services.scenarios import create_from_document, create_from_preset
from tests.factories import simulation_run
from tests.playground.test_api import BASE, client_for
from tests.queues.api.conftest import tiny_scenario

pytestmark = pytest.mark.django_db

SIM = "/api/v1/simulations/"


def test_given_a_user_at_the_scenario_quota_when_creating_one_over_the_api_then_429_names_it(admin, settings):
    settings.WHATIF_MAX_SCENARIOS_PER_USER = 2
    create_from_preset("volcano-16cpu", owner=admin)
    create_from_document(tiny_scenario(), owner=admin)

    response = client_for(admin).post(
        f"{BASE}/scenarios/", {"source": "preset", "preset": "volcano-16cpu"}, format="json"
    )

    assert response.status_code == 429
    assert response.json()["code"] == "storage_quota"
    assert "WHATIF_MAX_SCENARIOS_PER_USER=2" in response.json()["detail"]
    assert Scenario.objects.filter(owner=admin).count() == 2


def test_given_a_user_at_the_scenario_quota_when_posting_a_simulation_then_429_and_nothing_stored(
    admin, settings, no_broker
):
    settings.WHATIF_MAX_SCENARIOS_PER_USER = 1
    create_from_preset("volcano-16cpu", owner=admin)

    response = client_for(admin).post(SIM, {"scenario": tiny_scenario()}, format="json")

    assert response.status_code == 429
    assert response.json()["setting"] == "WHATIF_MAX_SCENARIOS_PER_USER"
    assert Scenario.objects.filter(owner=admin).count() == 1 and not Run.objects.exists()


def test_given_the_byte_quota_when_a_scenario_would_pass_it_then_refused_naming_the_limit(admin, settings):
    create_from_preset("volcano-16cpu", owner=admin)
    settings.WHATIF_MAX_STORED_BYTES_PER_USER = lane.stored_bytes(admin) + 100

    with pytest.raises(lane.StorageQuotaExceeded, match="WHATIF_MAX_STORED_BYTES_PER_USER"):
        create_from_document(tiny_scenario(), owner=admin)
    assert Scenario.objects.filter(owner=admin).count() == 1


def test_given_the_run_quota_then_one_more_stored_run_is_refused_even_when_finished(admin, settings, no_broker):
    settings.WHATIF_MAX_RUNS_PER_USER = 2
    volcano = create_from_preset("volcano-16cpu", owner=admin)
    simulation_run(admin, status=Run.Status.SUCCEEDED)
    runs.start_run(volcano, edits=["clusterQueues.q2.weight=3"], owner=admin)

    response = client_for(admin).post(
        f"{BASE}/runs/", {"scenario": str(volcano.pk), "edits": ["clusterQueues.q2.weight=4"]}, format="json"
    )

    assert response.status_code == 429
    assert "WHATIF_MAX_RUNS_PER_USER=2" in response.json()["detail"]


def test_given_a_user_at_the_scenario_quota_when_starting_from_the_page_then_a_form_error_names_it(
    admin_client, admin_user, settings
):
    settings.WHATIF_MAX_SCENARIOS_PER_USER = 1
    create_from_preset("volcano-16cpu", owner=admin_user)

    response = admin_client.post(reverse("playground:start"), {"source": "preset", "preset": "volcano-16cpu"})

    assert response.status_code == 400
    assert "WHATIF_MAX_SCENARIOS_PER_USER=1" in response.context["form"].non_field_errors()[0]
    assert Scenario.objects.filter(owner=admin_user).count() == 1


def test_given_old_scenarios_without_runs_then_pruned_whatever_the_source_keeping_applied_and_recent(admin, settings):
    settings.WHATIF_SCENARIO_RETENTION_SECONDS = 7 * 86400
    old = timezone.now() - timedelta(days=8)
    old_preset = create_from_preset("volcano-16cpu", owner=admin)
    old_upload = create_from_document(tiny_scenario(), owner=admin)
    recent_upload = create_from_document(tiny_scenario(name="recent"), owner=admin)
    applied_scenario = create_from_document(tiny_scenario(name="applied"), owner=admin)
    applied = Run.objects.create(scenario=applied_scenario, owner=admin, edits=["x"], status=Run.Status.SUCCEEDED)
    Application.objects.create(run=applied, actor=admin, actor_name=admin.username)
    Run.objects.filter(pk=applied.pk).update(created_at=old)
    Scenario.objects.filter(pk__in=[old_preset.pk, old_upload.pk, applied_scenario.pk]).update(created_at=old)

    lane.prune_finished_runs()

    assert set(Scenario.objects.values_list("pk", flat=True)) == {recent_upload.pk, applied_scenario.pk}
