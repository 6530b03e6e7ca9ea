"""API throttling by setting (per user, per anonymous address) and sign-in lockout (django-axes)
on the web login and the Django admin login."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse
from rest_framework.test import APIClient

from core.api_tokens import issue_token
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-enough-password"


@pytest.fixture(autouse=True)
def fresh_counters():
    cache.clear()
    yield
    cache.clear()


def test_given_a_user_rate_when_exceeded_then_429_and_other_users_are_unaffected(settings):
    settings.API_THROTTLE_RATES = {"user": "3/min", "anon": None}
    busy, other = APIClient(), APIClient()
    busy.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(UserFactory(username='busy', is_staff=True))}")
    other.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(UserFactory(username='other', is_staff=True))}")

    answers = [busy.get("/api/v1/cohorts/").status_code for _ in range(4)]

    assert answers == [200, 200, 200, 429]
    assert "throttled" in busy.get("/api/v1/cohorts/").json()["detail"].lower()
    assert other.get("/api/v1/cohorts/").status_code == 200


def test_given_an_anonymous_rate_when_exceeded_on_a_public_endpoint_then_429(settings):
    settings.API_THROTTLE_RATES = {"user": None, "anon": "2/min"}
    client = APIClient()

    # The schema is public; everything else answers an anonymous caller 401 before counting.
    assert [client.get("/api/schema/").status_code for _ in range(3)] == [200, 200, 429]


@pytest.mark.parametrize("login_url", [reverse("login"), reverse("admin:login")], ids=["web", "admin"])
def test_given_repeated_wrong_passwords_when_signing_in_then_locked_out_even_with_the_right_one(
    client, settings, login_url
):
    settings.AXES_FAILURE_LIMIT = 3
    UserFactory(username="target", is_staff=True, password=PASSWORD)

    for _ in range(3):
        client.post(login_url, {"username": "target", "password": "guess"})
    locked = client.post(login_url, {"username": "target", "password": PASSWORD})

    assert locked.status_code == 429
    assert "Too many failed sign-ins" in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_given_a_few_wrong_passwords_then_the_right_one_still_signs_in(client, settings):
    settings.AXES_FAILURE_LIMIT = 3
    UserFactory(username="typo", password=PASSWORD)

    client.post(reverse("login"), {"username": "typo", "password": "guess"})
    response = client.post(reverse("login"), {"username": "typo", "password": PASSWORD})

    assert response.status_code == 302 and "_auth_user_id" in client.session
