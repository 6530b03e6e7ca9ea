"""Hostile input to the API: YAML alias bombs in ``set`` edits, errors that would echo huge values."""

from __future__ import annotations

import time

import pytest

from queues.models import SimulationRun
from tests.hostile import alias_bomb
from tests.queues.api.conftest import tiny_scenario

pytestmark = pytest.mark.django_db

SIM = "/api/v1/simulations/"


def test_given_a_set_edit_with_nested_aliases_then_a_small_400_names_the_edit(world, clients):
    started = time.perf_counter()
    response = clients["viewer_a"].post(
        SIM, {"scenario": tiny_scenario(), "set": [f"clusterQueues.cq-a.weight={alias_bomb()}"]}, format="json"
    )

    assert time.perf_counter() - started < 2
    assert response.status_code == 400
    assert len(response.content) < 1_000
    (message,) = response.json()["scenario"]["set[0].--set clusterQueues.cq-a.weight"]
    assert "anchors and aliases" in message
    assert not SimulationRun.objects.exclude(pk=world.run_a.pk).exists()


def test_given_a_huge_value_in_a_scenario_then_the_error_echoes_only_its_beginning(world, clients):
    scenario = tiny_scenario(clusterQueues=[{"name": "cq-a " + "x" * 500_000}])

    response = clients["admin"].post(SIM, {"scenario": scenario}, format="json")

    assert response.status_code == 400
    assert len(response.content) < 2_000
