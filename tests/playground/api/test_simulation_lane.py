"""Background simulations in the what-if lane: a per-user cap, a 429 naming it."""

from __future__ import annotations

import pytest

from playground.models import Run
from tests.queues.api.conftest import tiny_scenario

pytestmark = pytest.mark.django_db

SIM = "/api/v1/simulations/"


def post_background(client):
    return client.post(SIM, {"scenario": tiny_scenario(), "run_in_background": True}, format="json")


def test_given_a_user_at_the_cap_when_posting_another_background_run_then_429_names_the_cap(
    world, clients, settings, django_capture_on_commit_callbacks, sent_nowhere
):
    settings.WHATIF_MAX_ACTIVE_PER_USER = 2
    admin = world.users["admin"]
    for _ in range(2):
        assert post_background(clients["admin"]).status_code == 202

    refused = post_background(clients["admin"])

    assert refused.status_code == 429
    assert refused.json()["code"] == "whatif_limit" and refused.json()["limit"] == 2
    assert "WHATIF_MAX_ACTIVE_PER_USER=2" in refused.json()["detail"]
    assert Run.objects.filter(owner=admin, scenario__source="api").count() == 2


def test_given_a_finished_run_then_it_no_longer_counts_against_the_cap(world, clients, settings, sent_nowhere):
    settings.WHATIF_MAX_ACTIVE_PER_USER = 1
    first = post_background(clients["admin"]).json()["id"]
    Run.objects.filter(pk=first).update(status=Run.Status.SUCCEEDED)

    assert post_background(clients["admin"]).status_code == 202


def test_given_the_cap_then_small_runs_are_capped_too(world, clients, settings, sent_nowhere):
    settings.WHATIF_MAX_ACTIVE_PER_USER = 1
    assert post_background(clients["admin"]).status_code == 202

    assert clients["admin"].post(SIM, {"scenario": tiny_scenario()}, format="json").status_code == 429


@pytest.fixture
def sent_nowhere(monkeypatch) -> list[str]:
    from playground import tasks

    ids: list[str] = []
    monkeypatch.setattr(tasks.run_playground, "delay", lambda run_id: ids.append(run_id))
    return ids
