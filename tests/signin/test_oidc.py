"""OpenID Connect sign-in against a real provider (npm oidc-provider): the whole
authorization-code flow over HTTP, groups from the claim -> roles at each sign-in, removal."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
import requests
from django.contrib.auth import get_user_model

from core.models import DirectoryIdentity, TenantMembership
from tests.factories import NamespaceFactory
from tests.signin.conftest import apply_env, report
from tests.signin.ldap_server import free_port
from tests.signin.oidc_server import OIDCProvider, log_in_at_provider

OIDC_MAP = '{"physics-team": "editor:physics", "chem-readers": ["viewer:chemistry"], "platform-admins": "admin"}'


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    """fairportal served over HTTP on a free loopback port (the provider redirects browsers here)."""
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer("127.0.0.1:0")
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def provider(site: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OIDCProvider]:
    idp = OIDCProvider(tmp=tmp_path_factory.mktemp("oidc"), port=free_port(), redirect_uri=f"{site}/oidc/callback/")
    idp.start()
    report("oidc-provider", idp.started_in)
    try:
        yield idp
    finally:
        idp.stop()


@pytest.fixture
def oidc_site(settings, provider, tmp_path, transactional_db):
    secret_file = tmp_path / "oidc-client-secret"
    secret_file.write_text(provider.client_secret + "\n")
    env = {
        "OIDC_ISSUER": provider.issuer,
        "OIDC_CLIENT_ID": provider.client_id,
        "OIDC_CLIENT_SECRET_FILE": str(secret_file),
        "OIDC_PROVIDER_NAME": "Example SSO",
        "OIDC_SCOPES": "openid email profile groups",
        "DIRECTORY_GROUP_MAP": OIDC_MAP,
    }
    for name in ("physics", "chemistry"):
        NamespaceFactory(name=name)
    return apply_env(settings, env)


def sign_in(site: str, provider: OIDCProvider, login: str) -> requests.Session:
    """A browser's walk: fairportal's sign-in page, its button, the provider's login form, back."""
    browser = requests.Session()
    page = browser.get(f"{site}/accounts/login/", timeout=30)
    assert "Sign in with Example SSO" in page.text
    at_provider = browser.get(f"{site}/oidc/authenticate/?next=/namespaces/physics/", timeout=30)
    assert at_provider.url.startswith(provider.issuer), at_provider.url  # redirected to the provider
    back = log_in_at_provider(browser, at_provider, login)
    assert urlsplit(back.url).netloc == urlsplit(site).netloc, back.url
    assert any("/oidc/callback/" in r.headers.get("Location", "") for r in back.history)
    return browser


def test_settings(oidc_site, provider):
    assert oidc_site["OIDC_RP_CLIENT_SECRET"] == provider.client_secret  # from the _FILE, newline stripped
    assert oidc_site["OIDC_GROUPS_CLAIM"] == "groups"
    assert oidc_site["LOCAL_LOGIN"] == "admins"
    assert "core.directory_oidc.DirectoryOIDCBackend" in oidc_site["AUTHENTICATION_BACKENDS"]


def test_authorization_code_flow_signs_in_with_groups(oidc_site, provider, site):
    provider.set_users({"olivia": ["physics-team", "chem-readers", "unmapped"]})
    browser = sign_in(site, provider, "olivia")
    olivia = get_user_model().objects.get(username="olivia")
    assert olivia.email == "olivia@example.org" and not olivia.has_usable_password()
    assert dict(TenantMembership.objects.filter(user=olivia).values_list("namespace__name", "role")) == {
        "physics": "editor",
        "chemistry": "viewer",
    }
    assert DirectoryIdentity.objects.get(user=olivia).source == "oidc"
    assert browser.get(f"{site}/namespaces/physics/", timeout=30).status_code == 200


def test_changed_groups_take_effect_at_next_sign_in(oidc_site, provider, site):
    provider.set_users({"oscar": ["physics-team", "platform-admins"]})
    browser = sign_in(site, provider, "oscar")
    assert browser.get(f"{site}/namespaces/physics/", timeout=30).status_code == 200
    assert get_user_model().objects.get(username="oscar").is_staff

    provider.set_users({"oscar": ["chem-readers"]})  # the directory took physics and admin away
    browser = sign_in(site, provider, "oscar")
    assert browser.get(f"{site}/namespaces/physics/", timeout=30).status_code == 404
    assert browser.get(f"{site}/namespaces/chemistry/", timeout=30).status_code == 200
    oscar = get_user_model().objects.get(username="oscar")
    assert not oscar.is_staff
    assert list(TenantMembership.objects.filter(user=oscar).values_list("namespace__name", flat=True)) == ["chemistry"]


def test_no_mapped_group_signs_in_to_nothing(oidc_site, provider, site):
    provider.set_users({"nadia": ["unmapped", "also-unmapped"]})
    browser = sign_in(site, provider, "nadia")
    assert browser.get(f"{site}/namespaces/physics/", timeout=30).status_code == 404
    assert not TenantMembership.objects.filter(user__username="nadia").exists()
    assert DirectoryIdentity.objects.get(user__username="nadia").groups == ["also-unmapped", "unmapped"]


def test_forged_callback_is_refused(oidc_site, provider, site):
    """A callback whose state this browser never got from fairportal signs nobody in."""
    browser = requests.Session()
    answer = browser.get(f"{site}/oidc/callback/?code=forged&state=forged", timeout=30)
    assert answer.url.startswith(f"{site}/accounts/login/")
    assert browser.get(f"{site}/namespaces/physics/", timeout=30, allow_redirects=False).status_code == 302


def test_local_login_false_hides_the_password_form(oidc_site, settings, site, client):
    settings.LOCAL_LOGIN = "false"
    get_user_model().objects.create_user("root", password="break-glass-pass-1", is_superuser=True, is_staff=True)
    page = client.get("/accounts/login/")
    assert b"Sign in with Example SSO" in page.content and b'name="password"' not in page.content
    answer = client.post("/accounts/login/", {"username": "root", "password": "break-glass-pass-1"})
    assert answer.status_code == 200 and not answer.wsgi_request.user.is_authenticated


def test_a_local_account_of_the_same_name_is_not_taken_over(oidc_site, provider, site):
    get_user_model().objects.create_user("olga", password="break-glass-pass-1", is_staff=True)
    provider.set_users({"olga": ["platform-admins"]})
    browser = requests.Session()
    back = log_in_at_provider(browser, browser.get(f"{site}/oidc/authenticate/", timeout=30), "olga")
    assert back.url.startswith(f"{site}/accounts/login/")
    assert browser.get(f"{site}/admin/", timeout=30, allow_redirects=False).status_code == 302
    assert not DirectoryIdentity.objects.filter(user__username="olga").exists()
