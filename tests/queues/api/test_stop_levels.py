"""Stops on LocalQueues: who set one is recorded, and only that level or a higher one lifts it."""

from __future__ import annotations

import pytest

from queues.models import LocalQueue

pytestmark = pytest.mark.django_db


def url(world) -> str:
    return f"/api/v1/local-queues/{world.lq_a.pk}/"


def stored(world) -> tuple[str, str, str]:
    queue = LocalQueue.objects.get(pk=world.lq_a.pk)
    return queue.stop_policy, queue.stop_level, queue.stopped_by


@pytest.mark.parametrize("method", ["patch", "put"])
@pytest.mark.parametrize("new_policy", ["None", "HoldAndDrain"])
def test_given_an_admins_hold_when_an_editor_lifts_or_changes_it_then_403_and_the_hold_stays(
    world, clients, method, new_policy
):
    assert clients["admin"].patch(url(world), {"stop_policy": "Hold"}).status_code == 200
    body = clients["editor_a"].get(url(world)).json()

    response = getattr(clients["editor_a"], method)(url(world), {**body, "stop_policy": new_policy})

    assert response.status_code == 403, response.content
    assert response.json()["code"] == "stop_locked"
    assert response.json()["detail"].startswith("stop_policy: the Hold stop was set by admin (admin)")
    assert stored(world) == ("Hold", "admin", "admin")


def test_given_an_editors_hold_then_the_api_shows_who_set_it_and_the_editor_or_an_admin_may_lift_it(world, clients):
    editor, admin = clients["editor_a"], clients["admin"]

    set_by_editor = editor.patch(url(world), {"stop_policy": "HoldAndDrain"}).json()
    lifted_by_editor = editor.patch(url(world), {"stop_policy": "None"})
    editor.patch(url(world), {"stop_policy": "Hold"})
    lifted_by_admin = admin.patch(url(world), {"stop_policy": "None"})

    assert (set_by_editor["stop_level"], set_by_editor["stopped_by"]) == ("editor", "editor-a")
    assert lifted_by_editor.status_code == 200 and lifted_by_admin.status_code == 200
    assert stored(world) == ("None", "", "")


def test_given_an_editors_hold_when_an_admin_changes_it_then_the_stop_becomes_the_admins(world, clients):
    clients["editor_a"].patch(url(world), {"stop_policy": "Hold"})

    clients["admin"].patch(url(world), {"stop_policy": "HoldAndDrain"})

    assert stored(world) == ("HoldAndDrain", "admin", "admin")
    assert clients["editor_a"].patch(url(world), {"stop_policy": "None"}).status_code == 403


def test_given_an_admins_hold_when_an_editor_edits_only_the_description_then_it_is_saved(world, clients):
    clients["admin"].patch(url(world), {"stop_policy": "Hold"})

    response = clients["editor_a"].patch(url(world), {"description": "paused by ops", "stop_policy": "Hold"})

    assert response.status_code == 200
    assert stored(world) == ("Hold", "admin", "admin")


def test_given_a_stop_from_before_levels_were_recorded_then_it_counts_as_an_admins(world, clients):
    LocalQueue.objects.filter(pk=world.lq_a.pk).update(stop_policy="Hold", stop_level="", stopped_by="")

    assert clients["editor_a"].patch(url(world), {"stop_policy": "None"}).status_code == 403
