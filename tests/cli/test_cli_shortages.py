"""``bin/fairportal why`` names every short resource as the API does, the dominant one first.

A real server (pytest-django's live server thread on the test database) over the issue's
8-GPU job (``tests.queues.shortage_cluster``), a real token, the CLI as a subprocess.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.cli.conftest import _reset_sequences, fairportal
from tests.queues.shortage_cluster import EXPECTED_MESSAGE, GPU, build_gpu_cluster

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Served:
    url: str
    token: str
    workload_id: int


@pytest.fixture(scope="module")
def served(django_db_setup, django_db_blocker) -> Iterator[Served]:
    from django.core.management import call_command
    from django.db import connection
    from pytest_django.live_server_helper import LiveServer

    from core.api_tokens import issue_token
    from core.models import TenantMembership
    from tests.factories import TenantMembershipFactory, UserFactory

    with django_db_blocker.unblock():
        before = connection.creation.serialize_db_to_string()
    server: LiveServer | None = None
    try:
        with django_db_blocker.unblock():
            cluster = build_gpu_cluster()
            user = UserFactory(username="tenant-a")
            TenantMembershipFactory(
                user=user, namespace=cluster.local_queue.namespace, role=TenantMembership.Role.EDITOR
            )
            token = issue_token(user)
        server = LiveServer("127.0.0.1")
        server._live_server_modified_settings.enable()
        yield Served(server.url, token, cluster.waiting.pk)
    finally:  # nothing committed here outlives the module (as tests/cli/conftest.py's demo_server)
        if server is not None:
            server._live_server_modified_settings.disable()
            server.stop()
        with django_db_blocker.unblock():
            call_command("flush", interactive=False, verbosity=0, inhibit_post_migrate=True)
            connection.creation.deserialize_db_from_string(before)
            _reset_sequences(connection)


def test_why_prints_the_apis_sentence_and_a_table_of_every_short_resource_dominant_first(served: Served):
    ran = fairportal("why", "team-a/train-8gpu", server=served.url, token=served.token)
    data = json.loads(fairportal("why", str(served.workload_id), "--json", server=served.url, token=served.token).out)

    assert ran.code == 0, ran.err
    sentence = EXPECTED_MESSAGE[0].upper() + EXPECTED_MESSAGE[1:] + "."
    assert data["reason"]["message"] == sentence
    assert sentence in ran.out
    table = ran.out[ran.out.index("short of 2 resources, the dominant one first:") :].splitlines()
    assert table[1].split() == ["RESOURCE", "FLAVOR", "REQUESTS", "AVAILABLE", "MORE_NEEDED"]
    assert table[2].split() == [GPU, "a100", "8", "0", "8"]
    assert table[3].split() == ["memory", "a100", "384Gi", "320Gi", "64Gi"]
    assert [row["resource"] for row in data["reason"]["shortages"]] == [GPU, "memory"]
    assert data["queue_position_state"] == "ranked"
