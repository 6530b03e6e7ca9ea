"""The demo's commands as the README shows them: bin/manage, `make token`, `make changepassword`,
and var/ kept private (the directory 0700, the key and the SQLite database 0600), run for real
on a SQLite database in a temporary var/ (FAIRPORTAL_VAR_DIR) with the default umask 022."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _umask_022() -> None:
    os.umask(0o022)


@pytest.fixture(scope="module")
def demo_var(tmp_path_factory) -> Path:
    """A var/ as `make run` leaves it: the key made by the Makefile's rule, then `migrate`."""
    home = tmp_path_factory.mktemp("demo")
    made = subprocess.run(
        ["make", "-s", "-C", str(home), "-f", str(ROOT / "Makefile"), str(home / "var" / "secret_key")],
        capture_output=True,
        text=True,
        preexec_fn=_umask_022,
    )
    assert made.returncode == 0, made.stderr
    return home / "var"


def demo_env(var: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "DEBUG", "SECRET_KEY", "SECRET_KEY_FILE"}
    }
    return {**env, "FAIRPORTAL_VAR_DIR": str(var)}


def run(args: list[str], var: Path, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, capture_output=True, text=True, cwd=ROOT, env=demo_env(var), preexec_fn=_umask_022, timeout=300, **kwargs
    )


@pytest.fixture(scope="module")
def migrated(demo_var: Path) -> Path:
    result = run(["bin/manage", "migrate", "--noinput", "-v", "0"], demo_var)
    assert result.returncode == 0, result.stderr
    created = run(
        [
            "bin/manage",
            "shell",
            "-c",
            "from django.contrib.auth import get_user_model; get_user_model().objects.create_user('alice', password='first-Password-1')",
        ],
        demo_var,
    )
    assert created.returncode == 0, created.stderr
    return demo_var


def test_given_the_makefile_then_var_is_0700_and_the_key_0600(demo_var: Path):
    assert mode(demo_var) == 0o700
    assert mode(demo_var / "secret_key") == 0o600


def test_given_migrate_then_the_sqlite_database_is_readable_by_its_owner_only(migrated: Path):
    database = migrated / "fairportal.sqlite3"
    assert database.stat().st_size > 0
    assert mode(database) & 0o077 == 0, oct(mode(database))


def test_given_an_existing_world_readable_database_then_start_up_makes_it_private(migrated: Path, tmp_path: Path):
    var = tmp_path / "var"
    var.mkdir(mode=0o700)
    (var / "secret_key").write_text((migrated / "secret_key").read_text())
    (var / "fairportal.sqlite3").write_bytes((migrated / "fairportal.sqlite3").read_bytes())
    (var / "fairportal.sqlite3").chmod(0o644)

    result = run(["bin/manage", "check"], var)

    assert result.returncode == 0, result.stderr
    assert mode(var / "fairportal.sqlite3") == 0o600


def test_given_make_token_then_only_the_key_is_printed_and_the_readme_recipe_exports_it(migrated: Path):
    made = run(["make", "-s", "token", "USER=alice"], migrated)
    assert made.returncode == 0, made.stderr
    assert re.fullmatch(r"[0-9a-f]{32,}\n", made.stdout), made.stdout

    # The recipe as written in the README and in docs/api.md, line by line.
    for page in ("README.md", "docs/api.md"):
        line = next(line for line in (ROOT / page).read_text().splitlines() if line.startswith("FAIRPORTAL_TOKEN=$("))
        recipe = f"{line} && printenv FAIRPORTAL_TOKEN"
        shell = run(["bash", "-c", recipe], migrated)
        assert shell.returncode == 0 and re.fullmatch(r"[0-9a-f]{32,}\n", shell.stdout), (page, shell.stderr)


def test_given_an_unknown_user_then_make_token_fails_loudly_and_the_recipe_exports_nothing(migrated: Path):
    made = run(["make", "-s", "token", "USER=nobody"], migrated)
    assert made.returncode != 0
    assert made.stdout == ""
    assert "no user named 'nobody'" in made.stderr

    recipe = 'FAIRPORTAL_TOKEN=$(make -s token USER=nobody) && export FAIRPORTAL_TOKEN; echo "status=$? token=[${FAIRPORTAL_TOKEN:-}]"'
    shell = run(["bash", "-c", recipe], migrated)
    assert "status=2 token=[]" in shell.stdout or re.search(r"status=[1-9]\d* token=\[\]", shell.stdout), shell.stdout
    assert "no user named 'nobody'" in shell.stderr


def test_given_no_user_then_make_token_says_how_to_call_it(migrated: Path):
    made = run(["make", "-s", "token"], migrated)
    assert made.returncode == 2 and "usage: make -s token USER=alice" in made.stderr


def test_given_make_changepassword_then_the_new_password_works(migrated: Path):
    # No controlling terminal (a new session): Django's getpass reads the two answers from stdin.
    changed = run(
        ["make", "changepassword", "USER=alice"],
        migrated,
        input="second-Password-2\nsecond-Password-2\n",
        start_new_session=True,
    )
    assert changed.returncode == 0, changed.stdout + changed.stderr
    check = run(
        [
            "bin/manage",
            "shell",
            "-c",
            "from django.contrib.auth import authenticate; from django.test import RequestFactory; "
            "print(authenticate(RequestFactory().get('/'), username='alice', password='second-Password-2'))",
        ],
        migrated,
    )
    assert check.stdout.strip().splitlines()[-1] == "alice", check.stdout + check.stderr


def test_given_the_demo_sqlite_database_then_a_users_stored_bytes_are_counted_as_on_postgresql(migrated: Path):
    """The playground's storage quota sums documents' sizes in SQL (``octet_length``), which the
    SQLite of Debian 12 (3.40) lacks: on the demo's database the count must still run and equal
    the stored documents' sizes in bytes."""
    script = (
        "from django.contrib.auth import get_user_model\n"
        "from playground.models import Scenario\n"
        "from django.db import connection\n"
        "from playground.services.lane import stored_bytes\n"
        "user = get_user_model().objects.get(username='alice')\n"
        "document = {'name': 'caf\\u00e9 \\u2013 sized', 'n': 1}\n"
        "Scenario.objects.create(owner=user, name='sized', source=Scenario.Source.choices[0][0], document=document)\n"
        "cursor = connection.cursor()\n"
        "cursor.execute('SELECT document FROM playground_scenario')\n"
        "print(stored_bytes(user), sum(len(row[0].encode()) for row in cursor.fetchall()))\n"
    )
    result = run(["bin/manage", "shell", "-c", script], migrated)
    assert result.returncode == 0, result.stderr
    counted, expected = result.stdout.splitlines()[-1].split()
    assert int(counted) == int(expected) > 0
