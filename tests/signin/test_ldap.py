"""LDAP sign-in against a real slapd: groups -> roles at each sign-in, removal, posixGroup."""

from __future__ import annotations

import logging

import pytest
from django.contrib.auth import get_user_model

from core.access import EXECUTORS_GROUP
from core.models import DirectoryIdentity, TenantMembership
from tests.factories import NamespaceFactory
from tests.signin.conftest import GROUPS, apply_env, ldap_env
from tests.signin.ldap_server import SERVICE_DN, make_certificates

pytestmark = pytest.mark.django_db


@pytest.fixture
def namespaces(db):
    return {name: NamespaceFactory(name=name) for name in ("physics", "chemistry", "biology")}


@pytest.fixture
def ldap_site(settings, slapd, tmp_path):
    return apply_env(settings, ldap_env(slapd, tmp_path))


def sign_in(client, username: str, password: str):
    client.logout()
    return client.post("/accounts/login/", {"username": username, "password": password})


def test_settings_from_the_environment(ldap_site, slapd):
    assert ldap_site["AUTH_LDAP_SERVER_URI"] == slapd.uri
    assert ldap_site["AUTH_LDAP_BIND_PASSWORD"] == slapd.service_password  # read from the _FILE, newline stripped
    assert ldap_site["AUTHENTICATION_BACKENDS"] == [
        "axes.backends.AxesStandaloneBackend",
        "core.directory_ldap.DirectoryLDAPBackend",
        "core.directory.LocalBackend",
    ]
    assert ldap_site["LOCAL_LOGIN"] == "admins"  # a directory is configured: break-glass admins only


def test_sign_in_maps_groups_to_namespaces(client, ldap_site, slapd, namespaces, caplog):
    caplog.set_level(logging.WARNING, logger="core.directory")
    response = sign_in(client, "alice", slapd.passwords["alice"])
    assert response.status_code == 302, response.content[:500]
    alice = get_user_model().objects.get(username="alice")
    assert alice.email == "alice@example.org" and not alice.has_usable_password()
    roles = {m.namespace.name: (m.role, m.source) for m in TenantMembership.objects.filter(user=alice)}
    assert roles == {"physics": ("editor", "directory"), "chemistry": ("viewer", "directory")}
    assert client.get("/namespaces/physics/").status_code == 200
    assert client.get("/namespaces/biology/").status_code == 404
    identity = DirectoryIdentity.objects.get(user=alice)
    assert identity.source == "ldap" and f"cn=hpc-physics,{GROUPS}" in identity.groups
    # the unknown namespace is logged once, then skipped at later sign-ins
    warnings = [r for r in caplog.records if "no-such-namespace" in r.getMessage()]
    sign_in(client, "alice", slapd.passwords["alice"])
    assert len([r for r in caplog.records if "no-such-namespace" in r.getMessage()]) == len(warnings) <= 1
    assert slapd.passwords["alice"] not in caplog.text


def test_wrong_password_is_refused(client, ldap_site, slapd, namespaces):
    response = sign_in(client, "alice", "not-the-password")
    assert response.status_code == 200 and not response.wsgi_request.user.is_authenticated
    assert not TenantMembership.objects.exists()


def test_removed_from_a_group_loses_the_namespace_at_next_sign_in(client, ldap_site, slapd, namespaces):
    password = slapd.passwords["dave"]
    assert sign_in(client, "dave", password).status_code == 302
    dave = get_user_model().objects.get(username="dave")
    # an admin grants biology by hand: the directory never touches it
    TenantMembership.objects.create(user=dave, namespace=namespaces["biology"], role="viewer")
    assert client.get("/namespaces/physics/").status_code == 200

    member = "uid=dave,ou=people,dc=example,dc=org"
    slapd.modify(f"dn: cn=hpc-physics,{GROUPS}\nchangetype: modify\ndelete: member\nmember: {member}\n")
    try:
        assert sign_in(client, "dave", password).status_code == 302
        assert client.get("/namespaces/physics/").status_code == 404
        assert client.get(f"/api/v1/namespaces/{namespaces['physics'].pk}/").status_code == 404
        assert client.get("/namespaces/biology/").status_code == 200
        assert set(TenantMembership.objects.filter(user=dave).values_list("namespace__name", "source")) == {
            ("biology", "local")
        }
    finally:
        slapd.modify(f"dn: cn=hpc-physics,{GROUPS}\nchangetype: modify\nadd: member\nmember: {member}\n")


def test_admin_and_executor_follow_their_groups(client, ldap_site, slapd, namespaces):
    assert sign_in(client, "carol", slapd.passwords["carol"]).status_code == 302
    assert sign_in(client, "erin", slapd.passwords["erin"]).status_code == 302
    users = get_user_model().objects
    assert users.get(username="carol").is_staff
    assert users.get(username="erin").groups.filter(name=EXECUTORS_GROUP).exists()
    assert client.get("/namespaces/biology/").status_code == 404  # an executor is no tenant

    for group, uid in (("hpc-admins", "carol"), ("hpc-executors", "erin")):
        replace_member(slapd, group, f"uid={uid},ou=people,dc=example,dc=org", SERVICE_DN)
    try:
        assert sign_in(client, "carol", slapd.passwords["carol"]).status_code == 302
        assert sign_in(client, "erin", slapd.passwords["erin"]).status_code == 302
        assert not users.get(username="carol").is_staff
        assert not users.get(username="erin").groups.filter(name=EXECUTORS_GROUP).exists()
        assert client.get("/admin/").status_code == 302  # no longer staff: sent to sign in
    finally:
        for group, uid in (("hpc-admins", "carol"), ("hpc-executors", "erin")):
            replace_member(slapd, group, SERVICE_DN, f"uid={uid},ou=people,dc=example,dc=org")


def replace_member(slapd, group: str, old: str, new: str) -> None:
    """groupOfNames needs a member: add the new one, then delete the old, in one change."""
    slapd.modify(
        f"dn: cn={group},{GROUPS}\nchangetype: modify\nadd: member\nmember: {new}\n-\ndelete: member\nmember: {old}\n"
    )


def test_hand_made_staff_stays_staff(client, ldap_site, slapd, namespaces):
    """is_staff an admin granted is not the directory's to take away."""
    erin = get_user_model().objects.create_user("erin", is_staff=True)
    assert sign_in(client, "erin", slapd.passwords["erin"]).status_code == 302
    erin.refresh_from_db()
    assert erin.is_staff and not DirectoryIdentity.objects.get(user=erin).granted_staff


def test_posix_groups(client, settings, slapd, tmp_path, namespaces):
    apply_env(
        settings,
        ldap_env(
            slapd,
            tmp_path,
            LDAP_GROUP_TYPE="posixGroup",
            LDAP_GROUP_SEARCH="ou=posixgroups,dc=example,dc=org",
        ),
    )
    assert sign_in(client, "dave", slapd.passwords["dave"]).status_code == 302
    assert client.get("/namespaces/physics/").status_code == 200
    assert client.get("/namespaces/chemistry/").status_code == 404


def test_local_login_admins_with_a_directory(client, ldap_site, namespaces):
    users = get_user_model().objects
    users.create_user("root", password="break-glass-pass-1", is_staff=True)
    users.create_user("someone", password="local-pass-word-2")
    assert sign_in(client, "someone", "local-pass-word-2").status_code == 200  # refused
    assert sign_in(client, "root", "break-glass-pass-1").status_code == 302


def test_a_local_account_of_the_same_name_is_not_taken_over(client, ldap_site, slapd, namespaces):
    get_user_model().objects.create_user("carol", password="break-glass-pass-1")
    assert sign_in(client, "carol", slapd.passwords["carol"]).status_code == 200  # the LDAP password: refused
    assert not get_user_model().objects.get(username="carol").is_staff


def test_start_tls_with_the_sites_ca(client, settings, slapd, tmp_path, namespaces):
    apply_env(settings, ldap_env(slapd, tmp_path, LDAP_START_TLS="true", LDAP_CA_CERT_FILE=str(slapd.tmp / "ca.pem")))
    assert sign_in(client, "alice", slapd.passwords["alice"]).status_code == 302
    assert client.get("/namespaces/physics/").status_code == 200


def test_start_tls_refuses_an_unknown_ca(client, settings, slapd, tmp_path, namespaces):
    """Without the CA the server's certificate is not trusted: no sign-in (so TLS really ran)."""
    other_ca = tmp_path / "other"
    other_ca.mkdir()
    make_certificates(other_ca)
    apply_env(settings, ldap_env(slapd, tmp_path, LDAP_START_TLS="true", LDAP_CA_CERT_FILE=str(other_ca / "ca.pem")))
    assert sign_in(client, "alice", slapd.passwords["alice"]).status_code == 200
