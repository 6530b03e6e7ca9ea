"""Pages before anything is configured: they explain what to do instead of failing."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from tests.queues.views.cluster import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(login):
    get_user_model().objects.create_user("root", password=PASSWORD, is_staff=True)
    return login("root")


def test_given_empty_database_when_admin_opens_tree_then_it_says_how_to_load_the_demo(admin_client):
    body = admin_client.get(reverse("queues:queue-tree")).content.decode()

    assert "seed_demo" in body


def test_given_no_samples_when_admin_opens_overview_then_charts_say_why_they_are_empty(admin_client):
    response = admin_client.get(reverse("queues:home"))
    figures = response.context["overview"].figures

    assert response.status_code == 200
    assert figures["chart-utilisation"]["data"] == []
    assert "No usage samples" in figures["chart-utilisation"]["layout"]["annotations"][0]["text"]


@pytest.mark.parametrize("name", ["queues:workloads", "queues:audit-log"])
def test_given_empty_database_when_lists_opened_then_they_say_nothing_matches(admin_client, name):
    response = admin_client.get(reverse(name))

    assert response.status_code == 200
    assert b"No " in response.content
