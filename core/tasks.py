"""The kernel's tasks: the control worker's heartbeat (``/readyz`` reads it) and signed webhook
delivery (``core.webhooks``)."""

from __future__ import annotations

import socket

from celery import Task, shared_task
from django.utils import timezone

from core import webhooks
from core.models import Heartbeat

CONTROL = "control"


@shared_task(name="core.heartbeat", ignore_result=True)
def heartbeat() -> None:
    """Stamp the control heartbeat: beat sends this to the control queue, so a fresh stamp
    means beat ticks, the broker carries messages and a control worker takes them."""
    Heartbeat.objects.update_or_create(
        name=CONTROL, defaults={"at": timezone.now(), "hostname": socket.gethostname()[:200]}
    )


@shared_task(name="core.deliver_webhook", ignore_result=True, bind=True, max_retries=None)
def deliver_webhook(self: Task, delivery_id: int, attempt: int | None = None) -> bool:
    """One attempt of a signed webhook (``core.webhooks.attempt``); the next one is this task
    again after the jittered backoff, until delivered or ``BUDGET_WEBHOOK_MAX_RETRIES`` retries
    failed. ``attempt``: the attempt this message is for (a duplicate finds it taken)."""
    outcome = webhooks.attempt(delivery_id, expected_attempt=attempt)
    if outcome.retry_in is not None:
        raise self.retry(args=(delivery_id, outcome.attempts + 1), countdown=outcome.retry_in)
    return outcome.delivered


@shared_task(name="core.sweep_webhooks", ignore_result=True)
def sweep_webhooks() -> int:
    """Beat: re-send pending webhook deliveries whose message the broker lost."""
    return webhooks.sweep()
