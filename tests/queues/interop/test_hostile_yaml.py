"""Kueue import refuses YAML anchors and aliases (alias bombs) over HTTP and on the command line."""

from __future__ import annotations

import io
import time

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from queues.models import ClusterQueue
from tests.hostile import alias_bomb

pytestmark = pytest.mark.django_db

IMPORT = reverse("interop:kueue-import")
BOMB = (
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: x}\nspec:\n  nodeLabels:\n"
    + "".join(f"    {line}\n" for line in alias_bomb(flow=False).splitlines())
)


@pytest.fixture
def staff_client() -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_user(username="ops", password="pw", is_staff=True))
    return client


@pytest.mark.parametrize("as_json", [False, True], ids=["yaml-body", "json-body"])
def test_given_manifests_with_aliases_when_imported_then_a_small_400_and_nothing_saved(staff_client, as_json):
    started = time.perf_counter()
    if as_json:
        response = staff_client.post(IMPORT, {"manifests": BOMB}, format="json")
    else:
        response = staff_client.post(IMPORT, BOMB, content_type="application/yaml")

    assert time.perf_counter() - started < 2
    assert response.status_code == 400
    assert len(response.content) < 1_000
    assert "anchors and aliases" in response.json()["errors"][0]
    assert not ClusterQueue.objects.exists()


def test_given_a_body_over_the_limit_when_imported_then_the_documented_json_400(staff_client):
    response = staff_client.post(IMPORT, "# padding\n" * 600_000, content_type="application/yaml")

    assert response.status_code == 400
    assert "larger than" in response.json()["non_field_errors"][0]


def test_given_aliases_on_the_command_line_then_a_short_error_and_status_2(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(BOMB))
    with pytest.raises(SystemExit) as exit_info:
        call_command("kueue_import", "-", stderr=(err := io.StringIO()))
    assert exit_info.value.code == 2
    first, *rest = err.getvalue().splitlines()
    assert "anchors and aliases" in first and len(first) < 300
    assert rest == ["nothing imported: 1 problem(s)"]
