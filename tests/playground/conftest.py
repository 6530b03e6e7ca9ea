"""Users of the playground tests: an admin, a tenant of one namespace, a stranger."""

from __future__ import annotations

import pytest

from core.models import TenantMembership
from queues.models import Namespace
from tests.factories import UserFactory


@pytest.fixture
def admin(db):
    return UserFactory(username="pg-admin", is_staff=True)


@pytest.fixture
def tenant(db):
    user = UserFactory(username="pg-tenant")
    namespace, _ = Namespace.objects.get_or_create(name="team-a")
    TenantMembership.objects.create(user=user, namespace=namespace, role=TenantMembership.Role.EDITOR)
    return user


@pytest.fixture
def stranger(db):
    return UserFactory(username="pg-stranger")


@pytest.fixture
def no_broker(monkeypatch):
    """Runs are sent after commit; these tests execute them by hand (``execute_run``)."""
    sent: list[str] = []
    from playground import tasks

    monkeypatch.setattr(tasks.run_playground, "delay", lambda run_id: sent.append(run_id))
    return sent
