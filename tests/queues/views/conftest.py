"""Fixtures of the dashboard view tests: the small cluster and a signed-in client per role."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

import pytest
from django.core.cache import cache
from django.db import transaction
from django.http import HttpRequest
from django.test import Client, override_settings

from tests.queues.views.cluster import PASSWORD, Cluster, build_cluster

ROLES = ("admin", "alice", "victor", "bob", "nobody")
FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fast_passwords(settings) -> None:
    """The default hasher costs ~0.3 s per user by design; tests create and sign in many."""
    settings.PASSWORD_HASHERS = FAST_HASHERS


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    """Derived history is cached per sample id; ids restart in every test database."""
    cache.clear()


@pytest.fixture(scope="module")
def _module_cluster(django_db_setup, django_db_blocker) -> Iterator[Cluster]:
    """Built once per test module inside a transaction that is rolled back at its end; each test
    runs in a savepoint inside it (pytest-django's ``db``), so writes never leak between tests."""
    with django_db_blocker.unblock(), transaction.atomic():
        with override_settings(PASSWORD_HASHERS=FAST_HASHERS):
            cluster = build_cluster()
        yield cluster
        transaction.set_rollback(True)


@pytest.fixture
def cluster(_module_cluster: Cluster, db) -> Cluster:
    """The module's cluster with every object re-read, so one test's edits never show in the next."""
    for field in dataclasses.fields(_module_cluster):
        getattr(_module_cluster, field.name).refresh_from_db()
    return _module_cluster


@pytest.fixture
def login(client: Client) -> Callable[[str], Client]:
    """``login("alice")`` signs the test client in as that user (``"anonymous"``: stays out)."""

    def sign_in(username: str) -> Client:
        if username != "anonymous":
            # Sign-in goes through django-axes, which needs the request the password came with.
            assert client.login(request=HttpRequest(), username=username, password=PASSWORD)
        return client

    return sign_in
