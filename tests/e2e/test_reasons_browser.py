"""The workload page in a real Chromium: the issue's 8-GPU job names both short resources, GPU
first, with the API's sentence; a workload submitted after the last pass shows its estimated
position at once (no "not ranked yet")."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from core.models import TenantMembership
from queues.selectors.reasons import sentence
from tests.e2e.signin import sign_in
from tests.factories import TenantMembershipFactory, UserFactory
from tests.queues.shortage_cluster import EXPECTED_MESSAGE, GPU, build_gpu_cluster

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def cluster(transactional_db, quiet_broker, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    built = build_gpu_cluster()
    user = UserFactory(username="tenant-a")  # password "pw"
    TenantMembershipFactory(user=user, namespace=built.local_queue.namespace, role=TenantMembership.Role.EDITOR)
    return built, user


def test_the_workload_page_names_every_short_resource_dominant_first(cluster, page, screenshot):
    built, user = cluster
    api = APIClient()
    api.force_authenticate(user)
    message = api.get(f"/api/v1/workloads/{built.waiting.pk}/").json()["pending_reason"]["message"]
    sign_in(page, "tenant-a", "pw")

    page.goto(reverse("queues:workload", args=["team-a", built.waiting.name]))

    assert message == EXPECTED_MESSAGE
    assert page.get_by_text(sentence("InsufficientQuota", message)).is_visible()
    rows = page.locator("#shortages tbody tr")
    assert rows.count() == 2
    assert rows.nth(0).locator("td").all_inner_texts() == [GPU, "a100", "8", "0", "8"]
    assert rows.nth(1).locator("td").all_inner_texts() == ["memory", "a100", "384Gi", "320Gi", "64Gi"]
    screenshot("workload-every-shortage")


def test_a_workload_submitted_after_the_pass_shows_its_estimated_position_at_once(cluster, page):
    _, user = cluster
    api = APIClient()
    api.force_authenticate(user)
    created = api.post(
        "/api/v1/workloads/",
        {"name": "one-more", "local_queue": "team-a/training", "pod_sets": [{"count": 1, "requests": {GPU: 1}}]},
        format="json",
    ).json()
    sign_in(page, "tenant-a", "pw")

    page.goto(reverse("queues:workload", args=["team-a", "one-more"]))

    assert (created["queue_position"], created["queue_position_state"]) == (2, "estimated")
    assert page.locator(".card-head .position").inner_text() == "#2"
    assert page.locator("#position-estimated").is_visible()
    assert page.get_by_text("Not ranked yet").count() == 0
