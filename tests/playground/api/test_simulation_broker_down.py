"""A broker that is down: a background simulation answers 503 with its run marked failed, never a
500 or a row stuck ``queued`` (the broker URL refuses connections, nothing is mocked)."""

from __future__ import annotations

import pytest

from playground.models import Run
from tests.factories import UserFactory
from tests.queues.api.conftest import client_for, tiny_scenario

SIM = "/api/v1/simulations/"


@pytest.mark.django_db(transaction=True)  # the view's own transaction commits, as in production
def test_given_the_broker_refuses_connections_when_a_background_run_is_posted_then_503_and_the_run_failed(
    dead_broker,
):
    client = client_for(UserFactory(username="sim-user", is_staff=True))
    response = client.post(SIM, {"scenario": tiny_scenario(), "run_in_background": True}, format="json")

    assert response.status_code == 503
    body = response.json()
    assert body["code"] == "queue_unavailable" and "could not be reached" in body["detail"]
    run = Run.objects.get(pk=body["run"]["id"])
    assert run.status == Run.Status.FAILED and run.finished_at is not None
