"""API tokens are stored hashed and expire; keys made before the change keep working."""

from __future__ import annotations

import importlib
import io
from datetime import timedelta

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection
from knox.models import AuthToken
from rest_framework.test import APIClient

from core.api_tokens import issue_token
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

LIST = "/api/v1/cohorts/"


def client_with(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_given_a_token_then_it_authenticates_and_only_its_hash_is_stored():
    user = UserFactory(username="robot", is_staff=True)
    key = issue_token(user)

    assert client_with(key).get(LIST).status_code == 200
    stored = AuthToken.objects.get(user=user)
    assert key not in (stored.digest, stored.token_key) and len(stored.token_key) < len(key)
    assert stored.expiry is not None


def test_given_an_expired_token_then_401():
    key = issue_token(UserFactory(username="old-robot", is_staff=True), ttl=timedelta(seconds=-1))

    assert client_with(key).get(LIST).status_code == 401


def test_given_the_command_then_it_prints_a_working_key_with_the_asked_lifetime():
    UserFactory(username="ci", is_staff=True)
    out = io.StringIO()

    call_command("create_api_token", "ci", "--ttl", "2h", stdout=out)

    key = out.getvalue().split()[2]
    assert client_with(key).get(LIST).status_code == 200
    expiry = AuthToken.objects.get(user__username="ci").expiry
    assert expiry is not None and expiry - AuthToken.objects.get(user__username="ci").created < timedelta(
        hours=2, minutes=1
    )


@pytest.mark.django_db(transaction=True)
def test_given_a_plain_text_key_from_before_when_migrated_then_it_still_works_and_the_plain_copy_is_gone():
    user = UserFactory(username="legacy", is_staff=True)
    old_key = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"  # a DRF authtoken key: 40 hex characters
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, user_id bigint, created timestamptz)"
        )
        cursor.execute("INSERT INTO authtoken_token VALUES (%s, %s, now())", [old_key, user.pk])
    try:
        migration = importlib.import_module("core.migrations.0001_hash_existing_api_tokens")
        with connection.schema_editor() as editor:
            migration.hash_existing_tokens(apps, editor)

        assert client_with(old_key).get(LIST).status_code == 200
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM authtoken_token")
            assert cursor.fetchone()[0] == 0
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE authtoken_token")
