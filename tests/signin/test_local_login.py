"""LOCAL_LOGIN: who may sign in with a password kept in fairportal's database."""

from __future__ import annotations

import logging

import pytest
from django.contrib.auth import get_user_model

from core.directory import apply_directory_groups
from core.models import DirectoryIdentity, TenantMembership
from tests.factories import NamespaceFactory

pytestmark = pytest.mark.django_db

PASSWORD = "a-local-pass-word-9"


@pytest.fixture
def accounts(db):
    users = get_user_model().objects
    return {
        "tenant": users.create_user("tenant", password=PASSWORD),
        "staff": users.create_user("staff", password=PASSWORD, is_staff=True),
        "root": users.create_superuser("root", password=PASSWORD),
    }


def signed_in(client, username: str) -> bool:
    client.logout()
    response = client.post("/accounts/login/", {"username": username, "password": PASSWORD})
    return response.status_code == 302 and response.wsgi_request.user.is_authenticated


@pytest.mark.parametrize(
    ("mode", "allowed"),
    [
        ("true", {"tenant", "staff", "root"}),
        ("admins", {"staff", "root"}),
        ("false", set()),
    ],
)
def test_local_login_modes(client, settings, accounts, mode, allowed):
    settings.LOCAL_LOGIN = mode
    assert {name for name in accounts if signed_in(client, name)} == allowed


def test_admin_site_obeys_local_login(client, settings, accounts):
    settings.LOCAL_LOGIN = "false"
    response = client.post("/admin/login/?next=/admin/", {"username": "root", "password": PASSWORD})
    assert response.status_code == 200 and not response.wsgi_request.user.is_authenticated


def test_sign_in_page_without_a_directory(client, settings):
    page = client.get("/accounts/login/").content
    assert b'name="password"' in page and b"Sign in with" not in page


# -- the mapping applied (what both back ends call) -------------------------------------------------


@pytest.fixture
def mapped(settings):
    from core.directory_map import parse_group_map

    settings.DIRECTORY_GROUP_MAP = parse_group_map(
        "physics-viewers=viewer:physics;physics-editors=editor:physics;chem=viewer:chemistry;ghosts=viewer:ghost;ops=executor"
    )
    return {name: NamespaceFactory(name=name) for name in ("physics", "chemistry")}


def memberships(user) -> dict[str, tuple[str, str]]:
    return {m.namespace.name: (m.role, m.source) for m in TenantMembership.objects.filter(user=user)}


def test_roles_are_replaced_at_each_sign_in(accounts, mapped):
    user = accounts["tenant"]
    apply_directory_groups(user, ["physics-viewers", "chem"], "ldap")
    assert memberships(user) == {"physics": ("viewer", "directory"), "chemistry": ("viewer", "directory")}
    apply_directory_groups(user, ["physics-viewers", "physics-editors"], "ldap")
    assert memberships(user) == {"physics": ("editor", "directory")}
    apply_directory_groups(user, [], "ldap")
    assert memberships(user) == {}
    assert DirectoryIdentity.objects.get(user=user).groups == []


def test_hand_granted_membership_is_kept_and_wins(accounts, mapped):
    user = accounts["tenant"]
    TenantMembership.objects.create(user=user, namespace=mapped["physics"], role="viewer")
    apply_directory_groups(user, ["physics-editors"], "oidc")
    assert memberships(user) == {"physics": ("viewer", "local")}
    apply_directory_groups(user, [], "oidc")
    assert memberships(user) == {"physics": ("viewer", "local")}


def test_executor_granted_by_hand_is_kept(accounts, mapped):
    from django.contrib.auth.models import Group

    user = accounts["tenant"]
    user.groups.add(Group.objects.get_or_create(name="executors")[0])
    apply_directory_groups(user, ["ops"], "ldap")
    apply_directory_groups(user, [], "ldap")
    assert user.groups.filter(name="executors").exists()


def test_unknown_namespace_is_logged_once(accounts, mapped, caplog):
    import core.directory

    core.directory._warned_unknown.discard("ghost")
    caplog.set_level(logging.WARNING, logger="core.directory")
    for _ in range(3):
        apply_directory_groups(accounts["tenant"], ["ghosts", "chem"], "ldap")
    assert [r.getMessage() for r in caplog.records].count(
        "DIRECTORY_GROUP_MAP names namespace 'ghost', which does not exist: skipped"
    ) == 1
    assert memberships(accounts["tenant"]) == {"chemistry": ("viewer", "directory")}
