"""docs/sign-in.md: every command shown runs here, and every example configuration loads (the
OpenLDAP one signs in against the test slapd as written, only the server's address changed)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from core.directory_map import parse_group_map
from core.directory_settings import sign_in_settings
from core.models import TenantMembership
from tests.factories import NamespaceFactory
from tests.signin.conftest import apply_env
from tests.signin.ldap_server import SERVICE_DN

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "sign-in.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.S)


def commands() -> list[str]:
    return [block for block in blocks("sh") if "make " in block or "manage.py" in block]


def configurations() -> list[dict[str, str]]:
    found = []
    for block in blocks("sh"):
        if block in commands():
            continue
        env = {}
        for line in block.strip().splitlines():
            name, _, value = line.partition("=")
            (env[name],) = shlex.split(value)
        found.append(env)
    return found


def with_secret_files(env: dict[str, str], tmp_path: Path, secret: str = "doc-secret") -> dict[str, str]:
    env = dict(env)
    for name in [name for name in env if name.endswith("_FILE")]:
        path = tmp_path / name.lower()
        path.write_text(secret + "\n")
        env[name] = str(path)
    return env


def test_the_doc_has_what_the_tests_check():
    assert len(commands()) == 2 and len(configurations()) == 4 and len(blocks("json")) == 1


def test_json_example_parses():
    (example,) = blocks("json")
    assert len(parse_group_map(example)) == 3


@pytest.mark.parametrize("index", range(4))
def test_example_configurations_load(index, tmp_path):
    env = with_secret_files(configurations()[index], tmp_path)
    values = sign_in_settings(env)
    assert values["LOCAL_LOGIN"] == "admins" and values["DIRECTORY_GROUP_MAP"]
    assert values["LDAP_ENABLED"] or values["OIDC_ISSUER"]


@pytest.mark.django_db
def test_openldap_example_signs_in_against_slapd(client, settings, slapd, tmp_path):
    (env,) = [conf for conf in configurations() if conf.get("LDAP_BIND_DN") == SERVICE_DN]
    env = with_secret_files({**env, "LDAP_SERVER_URI": slapd.uri}, tmp_path, slapd.service_password)
    apply_env(settings, env)
    NamespaceFactory(name="physics")
    response = client.post("/accounts/login/", {"username": "alice", "password": slapd.passwords["alice"]})
    assert response.status_code == 302
    alice = get_user_model().objects.get(username="alice")
    assert TenantMembership.objects.get(user=alice).role == "editor"


def run(block: str) -> subprocess.CompletedProcess:
    db = connection.settings_dict
    env = {
        **os.environ,
        "DEBUG": "true",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        if connection.vendor == "postgresql"
        else f"sqlite:///{db['NAME']}",
    }
    for name in ("LDAP_SERVER_URI", "OIDC_ISSUER", "DIRECTORY_GROUP_MAP", "LOCAL_LOGIN"):
        env.pop(name, None)
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.django_db(transaction=True)
def test_directory_roles_command_as_shown():
    (block,) = [block for block in commands() if "directory_roles" in block]
    NamespaceFactory(name="physics")
    result = run(block)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "  namespaces: physics:editor" in result.stdout and "  admin: no" in result.stdout
    assert "cn=hpc-admins,ou=groups,dc=example,dc=org = admin" in result.stdout


def test_make_install_ldap_as_shown():
    (block,) = [block for block in commands() if "make " in block]
    result = run(block)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert (
        subprocess.run([str(ROOT / ".venv/bin/python"), "-c", "import django_auth_ldap, ldap"], timeout=60).returncode
        == 0
    )
