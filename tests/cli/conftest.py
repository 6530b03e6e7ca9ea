"""A real fairportal server for the CLI: pytest-django's live server (Django's LiveServerThread
on the test database) with the demo cluster, a replayed hour of the control loop (so there is
decayed usage, stored queue order and pending work with reasons), and real API tokens from the
project's token machinery (``core.api_tokens.issue_token``).

The server and its data are shared by a module's tests (seeding the demo takes seconds). The
server thread has its own database connection, so the data are committed, outside any test
transaction; the tests only read (``bin/fairportal`` as a subprocess). When the module ends the
database is flushed and what the migrations had stored is put back, as Django's
``serialized_rollback`` does, so the tests after these find the database as they expect it.
The tests are marked ``django_db`` so that pytest-django sets the test database up.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "bin" / "fairportal"


@dataclass(frozen=True)
class Demo:
    url: str
    tokens: dict[str, str]
    # a pending workload of alice's (team-vision) and one of bob's (team-speech): "namespace/name", id
    alice_workload: tuple[str, int]
    bob_workload: tuple[str, int]


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str


def fairportal(
    *args: str,
    server: str | None = None,
    token: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> Ran:
    """``bin/fairportal ARGS`` as a user runs it, with FAIRPORTAL and FAIRPORTAL_TOKEN set."""
    environ = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "HOME": os.environ.get("HOME", "/tmp"),
    }
    if server is not None:
        environ["FAIRPORTAL"] = server
    if token is not None:
        environ["FAIRPORTAL_TOKEN"] = token
    environ.update(env or {})
    done = subprocess.run(
        [str(BIN), *args], capture_output=True, text=True, env=environ, timeout=timeout, check=False, cwd=cwd or ROOT
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def _pending_of(namespace: str) -> tuple[str, int]:
    from queues.models import PendingPosition, Workload, WorkloadState

    positioned = PendingPosition.objects.filter(workload__state=WorkloadState.PENDING).values_list(
        "workload_id", flat=True
    )
    workload = (
        Workload.objects.filter(namespace__name=namespace, state=WorkloadState.PENDING, id__in=positioned)
        .order_by("-id")
        .first()
    )
    assert workload is not None, f"the demo has no positioned pending workload in {namespace}"
    return f"{namespace}/{workload.name}", workload.id


@pytest.fixture(scope="module")
def demo_server(django_db_setup, django_db_blocker) -> Iterator[Demo]:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from pytest_django.live_server_helper import LiveServer

    from core.api_tokens import issue_token
    from queues.demo import seed_demo

    with django_db_blocker.unblock():
        before = connection.creation.serialize_db_to_string()
    server: LiveServer | None = None
    try:
        with django_db_blocker.unblock():
            seed_demo(history_seconds=3600)
            call_command("sample_usage", stdout=StringIO())
            call_command("admission_pass", stdout=StringIO())  # the queue order and reasons as of now
            users = get_user_model().objects
            tokens = {name: issue_token(users.get(username=name)) for name in ("admin", "alice", "bob")}
            alice_workload, bob_workload = _pending_of("team-vision"), _pending_of("team-speech")
        server = LiveServer("127.0.0.1")
        server._live_server_modified_settings.enable()
        yield Demo(url=server.url, tokens=tokens, alice_workload=alice_workload, bob_workload=bob_workload)
    finally:  # also when seeding failed half-way: nothing committed here outlives the module
        if server is not None:
            server._live_server_modified_settings.disable()
            server.stop()
        with django_db_blocker.unblock():
            call_command("flush", interactive=False, verbosity=0, inhibit_post_migrate=True)
            connection.creation.deserialize_db_from_string(before)
            _reset_sequences(connection)


def _reset_sequences(connection) -> None:
    """``flush`` restarts every id sequence at 1 and the restored rows keep their ids: move each
    sequence past its table's highest id, or the next insert (a group the migrations made) collides."""
    from django.apps import apps
    from django.core.management.color import no_style

    with connection.cursor() as cursor:
        for statement in connection.ops.sequence_reset_sql(no_style(), apps.get_models(include_auto_created=True)):
            cursor.execute(statement)


def as_user(demo: Demo, user: str, *args: str, **kwargs) -> Ran:
    return fairportal(*args, server=demo.url, token=demo.tokens[user], **kwargs)


__all__ = ["BIN", "ROOT", "Demo", "Ran", "as_user", "fairportal"]
