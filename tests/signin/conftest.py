"""The sign-in tests' real directory servers: Debian's slapd and the npm oidc-provider, each
started once per session on a free loopback port and stopped at the end."""

from __future__ import annotations

import secrets
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.directory_settings import sign_in_settings
from tests.signin.ldap_server import (
    SERVICE_DN,
    SUFFIX,
    Slapd,
    base_entries,
    free_port,
    group_of_names,
    person,
    posix_group,
)

GROUPS = f"ou=groups,{SUFFIX}"
# The mapping the tests sign in with (the text form; docs/sign-in.md shows it).
GROUP_MAP = (
    f"cn=hpc-physics,{GROUPS}=editor:physics;"
    f"cn=hpc-chemistry,{GROUPS}=viewer:chemistry;"
    f"cn=hpc-ghost,{GROUPS}=viewer:no-such-namespace;"
    f"cn=hpc-executors,{GROUPS}=executor;"
    f"cn=hpc-admins,{GROUPS}=admin;"
    f"cn=physics-posix,ou=posixgroups,{SUFFIX}=editor:physics"
)
USERS = ("alice", "dave", "carol", "erin")


def report(name: str, seconds: float) -> None:
    print(f"\n{name} started in {seconds:.2f}s", file=sys.stderr)


@pytest.fixture(scope="session")
def slapd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Slapd]:
    tmp = tmp_path_factory.mktemp("slapd")
    server = Slapd(tmp=tmp, port=free_port(), root_pw=secrets.token_urlsafe(18))
    server.start()
    report("slapd", server.started_in)
    try:
        server.service_password = secrets.token_urlsafe(18)
        server.passwords = {uid: secrets.token_urlsafe(12) for uid in USERS}
        entries = base_entries(server.service_password)
        for uid, password in server.passwords.items():
            entries += person(uid, password, uid.title(), "Tester")
        entries += group_of_names("hpc-physics", "alice", "dave")
        entries += group_of_names("hpc-chemistry", "alice")
        entries += group_of_names("hpc-ghost", "alice")
        entries += group_of_names("hpc-admins", "carol")
        entries += group_of_names("hpc-executors", "erin")
        entries += posix_group("physics-posix", 5000, "dave")
        server.add(entries)
        yield server
    finally:
        server.stop()


def ldap_env(slapd: Slapd, tmp: Path, **extra: str) -> dict[str, str]:
    """The environment a site sets (the bind password through a file, as docs/sign-in.md says)."""
    password_file = tmp / "ldap-bind-password"
    password_file.write_text(slapd.service_password + "\n")
    return {
        "LDAP_SERVER_URI": slapd.uri,
        "LDAP_BIND_DN": SERVICE_DN,
        "LDAP_BIND_PASSWORD_FILE": str(password_file),
        "LDAP_USER_SEARCH": f"ou=people,{SUFFIX}?(uid=%(user)s)",
        "LDAP_GROUP_SEARCH": f"{GROUPS}?(objectClass=groupOfNames)",
        "LDAP_GROUP_TYPE": "groupOfNames",
        "DIRECTORY_GROUP_MAP": GROUP_MAP,
        **extra,
    }


def apply_env(settings, env: dict[str, str]) -> dict:  # noqa: ANN001 - pytest-django's settings fixture
    """Configure the running settings exactly as fairportal/settings.py would from ``env``."""
    values = sign_in_settings(env)
    for name, value in values.items():
        setattr(settings, name, value)
    return values
