"""Alias bombs through every playground entry point: refused fast with a small 400, nothing stored."""

from __future__ import annotations

import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from playground.models import Run, Scenario
from tests.hostile import alias_bomb
from tests.playground.test_api import BASE, client_for, create_preset

pytestmark = pytest.mark.django_db


def test_given_an_edit_with_nested_aliases_when_a_run_is_posted_then_a_small_400_names_the_edit(admin, no_broker):
    client = client_for(admin)
    scenario = create_preset(client)
    edit = f"clusterQueues.q2.weight={alias_bomb()}"
    assert len(edit) < 400  # the 306-byte edit became a 39 MB answer

    started = time.perf_counter()
    response = client.post(f"{BASE}/runs/", {"scenario": scenario["id"], "edits": [edit]}, format="json")

    assert time.perf_counter() - started < 2
    assert response.status_code == 400
    assert len(response.content) < 1_000
    assert "anchors and aliases" in response.json()["edits"]["0"][0]
    assert not Run.objects.exists()


@pytest.mark.parametrize("as_file", [False, True], ids=["pasted", "uploaded"])
def test_given_a_scenario_with_aliases_when_uploaded_on_the_page_then_a_form_error(admin_client, as_file):
    text = "name: bomb\n" + alias_bomb(flow=False)
    data = {"source": "upload"}
    if as_file:
        data["file"] = SimpleUploadedFile("bomb.yaml", text.encode(), content_type="application/yaml")
    else:
        data["text"] = text

    started = time.perf_counter()
    response = admin_client.post(reverse("playground:start"), data)

    assert time.perf_counter() - started < 2
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert any("anchors and aliases" in message for messages in errors.values() for message in messages)
    assert len(response.content) < 200_000
    assert not Scenario.objects.exists()


def nested(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels - 1):
        value = {"x": value}
    return value


@pytest.mark.parametrize("endpoint", ["simulations", "scenarios"])
def test_given_a_json_body_nested_600_deep_then_a_400_names_the_limit_before_anything_copies_it(
    admin, endpoint, caplog
):
    """It was a RecursionError in ``copy.deepcopy`` (500, thousands of log lines) before validation."""
    client = client_for(admin)
    document = {"name": "deep", "extra": nested(600)}
    body = {"scenario": document} if endpoint == "simulations" else {"source": "document", "document": document}

    url = "/api/v1/simulations/" if endpoint == "simulations" else f"{BASE}/scenarios/"
    response = client.post(url, body, format="json")

    assert response.status_code == 400, response.content[:300]
    assert "nested deeper than 64 levels" in response.content.decode()
    assert len(response.content) < 1_000
    assert not Scenario.objects.exists() and not Run.objects.exists()
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
