"""Idempotency keys are kept for IDEMPOTENCY_KEY_RETENTION, then pruned by a beat task."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from queues.models import IdempotencyKey
from queues.services.submission import prune_idempotency_keys
from queues.tasks import prune_idempotency_keys as prune_task

pytestmark = pytest.mark.django_db


def submit(client, key: str, name: str):
    body = {"name": name, "local_queue": "team-a/main", "pod_sets": [{"count": 1, "requests": {"cpu": "1"}}]}
    return client.post("/api/v1/workloads/", body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_given_keys_older_than_the_retention_when_pruned_then_only_those_go(world, clients, settings):
    settings.IDEMPOTENCY_KEY_RETENTION_SECONDS = 3600
    assert submit(clients["editor_a"], "old-key", "first").status_code == 201
    assert submit(clients["editor_a"], "new-key", "second").status_code == 201
    IdempotencyKey.objects.filter(key="old-key").update(created_at=timezone.now() - timedelta(hours=2))

    deleted = prune_idempotency_keys()

    assert deleted == 1
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["new-key"]


def test_given_a_pruned_key_when_reused_with_another_body_then_it_is_a_new_submission_not_a_422(
    world, clients, settings
):
    settings.IDEMPOTENCY_KEY_RETENTION_SECONDS = 60
    assert submit(clients["editor_a"], "nightly", "run-1").status_code == 201
    assert submit(clients["editor_a"], "nightly", "run-2").status_code == 422  # within the retention
    IdempotencyKey.objects.update(created_at=timezone.now() - timedelta(minutes=5))

    prune_task()  # what beat runs
    again = submit(clients["editor_a"], "nightly", "run-2")

    assert again.status_code == 201 and again.json()["name"] == "run-2"
    assert "Idempotent-Replayed" not in again
