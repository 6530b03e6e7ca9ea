"""The usage series endpoint: filters by queue name, amounts in base units."""

from __future__ import annotations

import pytest

from tests.queues.api.conftest import sample

pytestmark = pytest.mark.django_db

URL = "/api/v1/usage-samples/"


def test_given_samples_when_filtered_by_local_queue_key_then_only_its_series(world, clients):
    response = clients["admin"].get(URL, {"local_queue": "team-a/main"})

    assert [row["id"] for row in response.json()["results"]] == [world.sample_a.pk]


def test_given_a_sample_then_amounts_are_base_units(world, clients):
    row = clients["admin"].get(f"{URL}{world.sample_cq.pk}/").json()

    assert row["kind"] == "clusterQueue"
    assert row["allocated"] == {"cpu": 3}
    assert row["consumed"] == {"cpu": 2.5}
    assert row["capacity"] == {"cpu": 32}


def test_given_a_series_when_bounded_in_time_then_rows_outside_are_left_out(world, clients):
    later = sample("localQueue", world.lq_a.pk)
    cut = later.sampled_at.isoformat()

    response = clients["admin"].get(URL, {"local_queue": "team-a/main", "after": cut})

    assert [row["id"] for row in response.json()["results"]] == [later.pk]


def test_given_tenant_b_when_asking_for_tenant_a_series_by_name_then_nothing(world, clients):
    assert clients["tenant_b"].get(URL, {"local_queue": "team-a/main"}).json()["count"] == 0


def test_given_an_infinite_weighted_share_then_null_not_invalid_json(world, clients):
    infinite = sample("namespace", world.ns_a.pk, weighted_share=float("inf"))

    assert clients["admin"].get(f"{URL}{infinite.pk}/").json()["weighted_share"] is None
