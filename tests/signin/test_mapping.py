"""The groups -> roles mapping and the sign-in settings, without a directory."""

from __future__ import annotations

import pytest

from core.directory_map import Grant, GroupMapError, parse_group_map, roles_for
from core.directory_settings import DirectorySettingsError, local_login_mode, sign_in_settings

PHYSICS = "cn=hpc-physics,ou=groups,dc=example,dc=org"


def test_text_form_splits_at_the_last_equals_sign():
    mapping = parse_group_map(
        f"{PHYSICS}=editor:physics; {PHYSICS}=viewer:chemistry\nCN=Admins,DC=x=admin;ops=executor"
    )
    assert mapping == {
        PHYSICS: (Grant("editor", "physics"), Grant("viewer", "chemistry")),
        "cn=admins,dc=x": (Grant("admin"),),
        "ops": (Grant("executor"),),
    }


def test_json_form():
    mapping = parse_group_map('{"Physics": "editor:physics", "chem": ["viewer:chemistry", "executor"]}')
    assert mapping == {
        "physics": (Grant("editor", "physics"),),
        "chem": (Grant("viewer", "chemistry"), Grant("executor")),
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("g=owner:physics", "unknown role"),
        ("g=editor", "needs a namespace"),
        ("g=admin:physics", "takes no namespace"),
        ("no-equals-sign", "expected GROUP=ROLE"),
        ("{not json", "not valid JSON"),
        ('{"g": 3}', "expected a role or a list"),
        ('["g"]', "JSON object"),
    ],
)
def test_bad_mappings_are_refused(text, message):
    with pytest.raises(GroupMapError, match=message):
        parse_group_map(text)


def test_roles_for_groups():
    mapping = parse_group_map(f"{PHYSICS}=viewer:physics;physics-leads=editor:physics;admins=admin;ops=executor")
    roles = roles_for([PHYSICS.upper(), "physics-leads", "unmapped"], mapping)
    assert dict(roles.namespaces) == {"physics": "editor"}  # the stronger role, case-insensitive groups
    assert not roles.admin and not roles.executor
    assert roles_for(["admins", "ops"], mapping).admin and roles_for(["ops"], mapping).executor
    assert roles_for([], mapping).namespaces == {}


def test_local_login_defaults():
    assert local_login_mode({}, directory=False) == "true"
    assert local_login_mode({}, directory=True) == "admins"
    assert local_login_mode({"LOCAL_LOGIN": "false"}, directory=True) == "false"
    with pytest.raises(DirectorySettingsError, match="nobody could sign in"):
        local_login_mode({"LOCAL_LOGIN": "false"}, directory=False)
    with pytest.raises(DirectorySettingsError, match="true, false or admins"):
        local_login_mode({"LOCAL_LOGIN": "staff"}, directory=True)


def test_without_a_directory_only_local_passwords():
    values = sign_in_settings({})
    assert values["AUTHENTICATION_BACKENDS"] == ["axes.backends.AxesStandaloneBackend", "core.directory.LocalBackend"]
    assert values["LOCAL_LOGIN"] == "true" and not values["LDAP_ENABLED"] and values["OIDC_ISSUER"] == ""


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"LDAP_SERVER_URI": "ldap://127.0.0.1:1"}, "LDAP_USER_SEARCH"),
        (
            {
                "LDAP_SERVER_URI": "ldap://127.0.0.1:1",
                "LDAP_USER_SEARCH": "dc=x",
                "LDAP_GROUP_SEARCH": "dc=x",
                "LDAP_GROUP_TYPE": "nis",
            },
            "LDAP_GROUP_TYPE",
        ),
        (
            {
                "LDAP_SERVER_URI": "ldap://127.0.0.1:1",
                "LDAP_USER_SEARCH": "dc=x?uid=%(user)s",
                "LDAP_GROUP_SEARCH": "dc=x",
            },
            "parentheses",
        ),
        (
            {
                "LDAP_SERVER_URI": "ldap://127.0.0.1:1",
                "LDAP_USER_SEARCH": "dc=x",
                "LDAP_GROUP_SEARCH": "dc=x",
                "LDAP_BIND_PASSWORD_FILE": "/nonexistent/pw",
            },
            "LDAP_BIND_PASSWORD_FILE",
        ),
        (
            {
                "LDAP_SERVER_URI": "ldap://127.0.0.1:1",
                "LDAP_USER_SEARCH": "dc=x",
                "LDAP_GROUP_SEARCH": "dc=x",
                "LDAP_CA_CERT_FILE": "/nonexistent/ca.pem",
            },
            "LDAP_CA_CERT_FILE",
        ),
        ({"OIDC_ISSUER": "https://sso.example.org"}, "OIDC_CLIENT_ID"),
        ({"DIRECTORY_GROUP_MAP": "g=root"}, "DIRECTORY_GROUP_MAP"),
    ],
)
def test_bad_settings_name_the_variable(env, message):
    with pytest.raises(DirectorySettingsError, match=message):
        sign_in_settings(env)


def test_secrets_are_not_in_errors(tmp_path):
    with pytest.raises(DirectorySettingsError) as error:
        sign_in_settings({"OIDC_ISSUER": "https://sso.example.org", "OIDC_CLIENT_SECRET": "hunter2-secret"})
    assert "hunter2-secret" not in str(error.value)


def test_provider_name_defaults_to_the_issuer_host():
    values = sign_in_settings(
        {"OIDC_ISSUER": "https://sso.example.org/realms/hpc/", "OIDC_CLIENT_ID": "c", "OIDC_CLIENT_SECRET": "s"}
    )
    assert (
        values["OIDC_PROVIDER_NAME"] == "sso.example.org"
        and values["OIDC_ISSUER"] == "https://sso.example.org/realms/hpc"
    )
