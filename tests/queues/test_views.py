"""The home page lists the cluster's queues."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_given_demo_when_home_opened_then_every_cluster_queue_and_local_queue_is_listed(client, demo):
    response = client.get(reverse("home"))
    body = response.content.decode()
    assert response.status_code == 200
    for name in ("gpu-training", "gpu-inference", "cpu-batch", "cpu-interactive", "team-vision/training"):
        assert name in body


def test_given_empty_database_when_home_opened_then_it_says_how_to_load_the_demo(client):
    body = client.get(reverse("home")).content.decode()
    assert "seed_demo" in body
