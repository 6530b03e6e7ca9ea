"""If-Match under real concurrency on PostgreSQL: two writers holding the same ETag cannot both
pass, because the comparison runs inside the write's transaction with the row locked.

These tests commit (``transaction=True``): each thread has its own database connection.
"""

from __future__ import annotations

import threading
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection, transaction

from core.models import PolicyChange, Surface
from queues.models import ClusterQueue
from queues.services.policy import save_policy_object
from tests.queues.api.conftest import build_world, client_for
from tests.queues.api.test_concurrency import at_once, wait_until_a_query_waits_on_a_lock

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def committed_world():
    return build_world()


@pytest.mark.parametrize("round_", range(3))
def test_given_two_admins_patching_with_the_same_etag_at_once_then_one_wins_and_the_other_gets_412(
    committed_world, round_
):
    queue = committed_world.cluster_queue
    url = f"/api/v1/cluster-queues/{queue.pk}/"
    first, second = client_for(committed_world.users["admin"]), client_for(committed_world.users["admin"])
    etag = first.get(url)["ETag"]
    changes = PolicyChange.objects.count()

    responses = at_once(
        lambda: first.patch(url, {"weight": 3}, format="json", HTTP_IF_MATCH=etag),
        lambda: second.patch(url, {"weight": 5}, format="json", HTTP_IF_MATCH=etag),
    )

    assert sorted(r.status_code for r in responses) == [200, 412]
    winner = next(r for r in responses if r.status_code == 200)
    loser = next(r for r in responses if r.status_code == 412)
    assert ClusterQueue.objects.get(pk=queue.pk).weight == Decimal(str(winner.json()["weight"]))
    assert PolicyChange.objects.count() == changes + 1
    assert loser.json()["last_change"]["changed_fields"] == ["weight"]
    assert first.get(url)["ETag"] == winner["ETag"]


def test_given_a_patch_waiting_on_the_row_lock_when_the_holder_commits_a_change_then_it_is_a_412(committed_world):
    """Deterministic interleaving: the PATCH read its ETag while the row was unchanged and waits
    on the lock of a transaction that changes the queue; once that commits, the PATCH's
    comparison sees the new version and refuses, writing nothing."""
    queue_id = committed_world.cluster_queue.pk
    url = f"/api/v1/cluster-queues/{queue_id}/"
    admin = client_for(committed_world.users["admin"])
    etag = admin.get(url)["ETag"]
    holding, release = threading.Event(), threading.Event()

    def change_while_holding_the_row() -> None:
        try:
            with transaction.atomic():
                queue = ClusterQueue.objects.select_for_update().get(pk=queue_id)
                holding.set()
                release.wait(timeout=10)
                queue.weight = Decimal(7)
                save_policy_object(queue, actor=committed_world.users["admin"], surface=Surface.UI)
        finally:
            connection.close()

    outcome: list[Any] = []

    def patch() -> None:
        try:
            outcome.append(admin.patch(url, {"weight": 2}, format="json", HTTP_IF_MATCH=etag))
        finally:
            connection.close()

    holder = threading.Thread(target=change_while_holding_the_row)
    holder.start()
    assert holding.wait(timeout=10)
    contender = threading.Thread(target=patch)
    contender.start()
    wait_until_a_query_waits_on_a_lock()
    release.set()
    holder.join(timeout=10)
    contender.join(timeout=10)

    assert outcome[0].status_code == 412
    assert outcome[0].json()["last_change"]["surface"] == "ui"
    assert ClusterQueue.objects.get(pk=queue_id).weight == Decimal(7)


def test_given_a_patch_waiting_on_the_row_lock_when_the_holder_deletes_the_object_then_it_is_a_404(committed_world):
    queue_id = committed_world.spare_cluster_queue.pk
    url = f"/api/v1/cluster-queues/{queue_id}/"
    admin = client_for(committed_world.users["admin"])
    etag = admin.get(url)["ETag"]
    holding, release = threading.Event(), threading.Event()

    def delete_while_holding_the_row() -> None:
        try:
            with transaction.atomic():
                queue = ClusterQueue.objects.select_for_update().get(pk=queue_id)
                holding.set()
                release.wait(timeout=10)
                queue.delete()
        finally:
            connection.close()

    outcome: list[Any] = []

    def patch() -> None:
        try:
            outcome.append(admin.patch(url, {"weight": 2}, format="json", HTTP_IF_MATCH=etag))
        finally:
            connection.close()

    holder = threading.Thread(target=delete_while_holding_the_row)
    holder.start()
    assert holding.wait(timeout=10)
    contender = threading.Thread(target=patch)
    contender.start()
    wait_until_a_query_waits_on_a_lock()
    release.set()
    holder.join(timeout=10)
    contender.join(timeout=10)

    assert outcome[0].status_code == 404
    assert not ClusterQueue.objects.filter(pk=queue_id).exists()
