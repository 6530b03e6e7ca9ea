"""Signed webhooks following the Standard Webhooks specification (docs/webhooks.md).

Every message is a ``WebhookDelivery`` row (one per message and endpoint), written in the
transaction of what it announces (a budget event, an audited policy change) and sent after the
commit by the ``core.deliver_webhook`` task, through ``core.outbound`` (addresses checked at save
and again at send, no redirects, fixed error sentences). Each attempt is signed afresh:

* ``webhook-id``: the message id, the same on every attempt (receivers dedupe by it);
* ``webhook-timestamp``: the attempt's time, whole seconds since the epoch;
* ``webhook-signature``: ``v1,<base64 HMAC-SHA256 of "id.timestamp.body">`` per active secret,
  separated by spaces (two during a rotation: the new secret's first).

Retries: a failed attempt (network error, or not 2xx) is tried again after
``backoff(n)`` seconds with equal jitter (half fixed, half random), ``BUDGET_WEBHOOK_MAX_RETRIES``
times, then the delivery is ``failed``. One sender at a time: an attempt claims the row with a
conditional UPDATE (pending, not leased, and the attempt number the message expects), so a
message delivered twice by the broker sends once. ``sweep`` re-sends what a lost message left
pending. Queries: ``attempt`` runs five statements (read, claim, re-read the count, record,
re-read) plus the observers' (budgets: one UPDATE); ``queue`` two or three per endpoint.

Apps above the kernel follow their own deliveries through ``DELIVERY_OBSERVERS`` (budgets keeps
each BudgetEvent's webhook status in step with its own endpoint's delivery).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import random
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from core import extensions, outbound
from core.enqueue import enqueue_on_commit, send
from core.models import PolicyChange, WebhookDelivery, WebhookEndpoint
from core.models.webhooks import POLICY_CHANGED, wants

logger = logging.getLogger(__name__)

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32
MAX_BACKOFF_SECONDS = 600
DELIVER_TASK = "core.deliver_webhook"
DISABLED = "not sent: the endpoint is disabled"
USER_AGENT = "fairportal-webhooks/1"
DELIVERY_RETENTION = timedelta(days=30)  # delivered and failed deliveries are kept this long

# Called with the delivery after each change of its status (an attempt, a redelivery).
DELIVERY_OBSERVERS: extensions.ExtensionPoint[Callable[[WebhookDelivery], None]] = extensions.ExtensionPoint(
    "webhook delivery observers"
)


# --- secrets and signatures -------------------------------------------------------------------


def new_secret() -> str:
    """``whsec_`` + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def _key(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix(SECRET_PREFIX))


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """``v1,<base64 HMAC-SHA256 of "message_id.timestamp.body">`` with the secret's bytes."""
    digest = hmac.new(_key(secret), f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signed_headers(signing_secrets: Iterable[str], message_id: str, body: bytes, *, timestamp: int) -> dict[str, str]:
    """The request's headers: the three of the specification, content type and user agent."""
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(sign(secret, message_id, timestamp, body) for secret in signing_secrets),
    }


# --- endpoints ---------------------------------------------------------------------------------


def rotate_secret(endpoint: WebhookEndpoint, *, keep_previous_until: datetime | None, now: datetime) -> str:
    """A new active secret (returned: shown once); the old one keeps signing until
    ``keep_previous_until`` (``None``: until ``drop_previous_secret``; a time not after ``now``:
    not at all). Saves the endpoint (the caller audits it)."""
    endpoint.previous_secret = endpoint.secret
    endpoint.previous_secret_expires_at = keep_previous_until
    if keep_previous_until is not None and keep_previous_until <= now:
        endpoint.previous_secret, endpoint.previous_secret_expires_at = "", None
    endpoint.secret = new_secret()
    endpoint.secret_rotated_at = now
    endpoint.save(update_fields=["secret", "previous_secret", "previous_secret_expires_at", "secret_rotated_at"])
    return endpoint.secret


def drop_previous_secret(endpoint: WebhookEndpoint) -> None:
    """End a rotation now: only the active secret signs."""
    endpoint.previous_secret, endpoint.previous_secret_expires_at = "", None
    endpoint.save(update_fields=["previous_secret", "previous_secret_expires_at"])


def site_endpoints(event_type: str) -> list[WebhookEndpoint]:
    """Enabled admin endpoints subscribed to ``event_type`` (one query; endpoints are few)."""
    endpoints = WebhookEndpoint.objects.filter(enabled=True, scope=WebhookEndpoint.Scope.SITE).only("id", "events")
    return [
        endpoint for endpoint in endpoints if isinstance(endpoint.events, list) and wants(endpoint.events, event_type)
    ]


# --- queueing ----------------------------------------------------------------------------------


def queue(
    endpoints: Iterable[WebhookEndpoint],
    *,
    event_type: str,
    source: str,
    source_id: int,
    body: dict[str, Any],
    enqueue: bool = True,
) -> list[WebhookDelivery]:
    """A delivery row per endpoint (none twice: the message id is the source's), each sent by
    ``core.deliver_webhook`` after the commit (``enqueue=False``: the caller sends it). A broker
    outage leaves the rows pending for ``sweep``. Returns the rows created now."""
    message_id = f"{source}-{source_id}"
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    created = []
    now = timezone.now()
    for endpoint in endpoints:
        delivery, new = WebhookDelivery.objects.get_or_create(
            endpoint=endpoint,
            message_id=message_id,
            defaults={
                "event_type": event_type,
                "source": source,
                "source_id": source_id,
                "body": text,
                "next_attempt_at": now,
            },
        )
        if new:
            created.append(delivery)
            if enqueue:
                enqueue_on_commit(DELIVER_TASK, delivery.pk, 1)
    return created


def policy_change_payload(change: PolicyChange) -> dict[str, Any]:
    """The ``policy.changed`` body: the PolicyChange's own fields, nothing else."""
    return {
        "type": POLICY_CHANGED,
        "timestamp": change.at.isoformat(),
        "data": {
            "id": change.pk,
            "at": change.at.isoformat(),
            "actor": change.actor_name or None,
            "surface": change.surface,
            "action": change.action,
            "objectType": change.object_type,
            "objectId": change.object_id,
            "object": change.object_repr,
            "changedFields": change.changed_fields(),
            "before": change.before,
            "after": change.after,
            "note": change.note,
        },
    }


def policy_change_recorded(change: PolicyChange) -> None:
    """Called by ``core.audit`` for each PolicyChange row, inside the write's transaction: a
    delivery per subscribed endpoint, sent once the write commits (none if it rolls back).
    One query when nobody subscribes."""
    endpoints = site_endpoints(POLICY_CHANGED)
    if endpoints:
        queue(
            endpoints,
            event_type=POLICY_CHANGED,
            source=WebhookDelivery.Source.POLICY_CHANGE,
            source_id=change.pk,
            body=policy_change_payload(change),
        )


# --- delivery ----------------------------------------------------------------------------------


def backoff(retries: int) -> int:
    """The base wait before retry ``retries + 1``: BUDGET_WEBHOOK_BACKOFF doubled each time,
    capped at 10 minutes."""
    return min(MAX_BACKOFF_SECONDS, settings.BUDGET_WEBHOOK_BACKOFF_SECONDS * 2 ** min(retries, 32))


def jittered(seconds: float, rng: random.Random | None = None) -> float:
    """Equal jitter: half the wait fixed, the other half random, so receivers coming back from
    an outage are not hit by every sender at the same second."""
    return seconds / 2 + (rng or random).uniform(0, seconds / 2)


@dataclass(frozen=True)
class Outcome:
    attempted: bool  # False: nothing to do (delivered, failed, another sender has it)
    delivered: bool = False
    error: str = ""  # a fixed sentence
    attempts: int = 0
    retry_in: float | None = None  # seconds until the next attempt, when there is one


def _notify(delivery: WebhookDelivery) -> None:
    for name, observer in extensions.items(DELIVERY_OBSERVERS):
        try:
            observer(delivery)
        except Exception:  # noqa: BLE001 - an observer's bug must not undo the recorded outcome
            logger.exception("webhook delivery %s: observer %s failed", delivery.pk, name)


def attempt(delivery_id: int, *, expected_attempt: int | None = None, timeout: float | None = None) -> Outcome:
    """Send the delivery once, if it is still pending and no other sender holds it (and, with
    ``expected_attempt``, if this is that attempt: a duplicate message finds the count moved on).
    Records the outcome on the row; never raises for the receiver's or the network's failures."""
    timeout = settings.BUDGET_WEBHOOK_TIMEOUT_SECONDS if timeout is None else timeout
    delivery = WebhookDelivery.objects.select_related("endpoint").filter(pk=delivery_id).first()
    if delivery is None or delivery.status != WebhookDelivery.Status.PENDING:
        return Outcome(attempted=False)
    endpoint = delivery.endpoint
    now = timezone.now()
    if not endpoint.enabled:
        WebhookDelivery.objects.filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING).update(
            status=WebhookDelivery.Status.FAILED, last_error=DISABLED, next_attempt_at=None
        )
        delivery.refresh_from_db()
        _notify(delivery)
        return Outcome(attempted=False, error=DISABLED)
    claim = WebhookDelivery.objects.filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING).filter(
        Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    )
    if expected_attempt is not None:
        claim = claim.filter(attempts=expected_attempt - 1)
    if not claim.update(
        attempts=F("attempts") + 1, last_attempt_at=now, lease_until=now + timedelta(seconds=timeout + 30)
    ):
        return Outcome(attempted=False)
    delivery.refresh_from_db(fields=["attempts"])
    attempts = delivery.attempts
    body = delivery.body.encode()
    status: int | None = None
    try:
        headers = signed_headers(endpoint.signing_secrets(now), delivery.message_id, body, timestamp=int(time.time()))
        # resolved and checked again here, connected to the checked address, no redirects
        status = outbound.post_json(endpoint.url, body, timeout=timeout, headers=headers)
        error = "" if 200 <= status < 300 else f"HTTP {status}"
    except outbound.OutboundError as refused:
        error = str(refused)  # a fixed sentence: no network detail
    done = timezone.now()
    retry_in: float | None = None
    changes: dict[str, Any]
    if not error:
        changes = {"status": WebhookDelivery.Status.DELIVERED, "delivered_at": done, "next_attempt_at": None}
    elif attempts > settings.BUDGET_WEBHOOK_MAX_RETRIES:
        changes = {"status": WebhookDelivery.Status.FAILED, "next_attempt_at": None}
        logger.warning("webhook delivery %s (%s) failed after %d tries: %s", delivery_id, endpoint, attempts, error)
    else:
        retry_in = jittered(backoff(attempts - 1))
        changes = {"next_attempt_at": done + timedelta(seconds=retry_in)}
    WebhookDelivery.objects.filter(pk=delivery_id).update(
        last_status_code=status, last_error=error[:300], lease_until=None, **changes
    )
    delivery.refresh_from_db()
    _notify(delivery)
    return Outcome(attempted=True, delivered=not error, error=error, attempts=attempts, retry_in=retry_in)


def redeliver(deliveries: Iterable[WebhookDelivery]) -> int:
    """Send again from the first attempt (the same message id and body, signed afresh), after
    the commit; a delivery a sender holds right now is left alone. Returns how many."""
    count = 0
    now = timezone.now()
    for delivery in deliveries:
        with transaction.atomic():
            reset = WebhookDelivery.objects.filter(pk=delivery.pk).filter(
                Q(lease_until__isnull=True) | Q(lease_until__lt=now)
            )
            if not reset.update(
                status=WebhookDelivery.Status.PENDING,
                attempts=0,
                next_attempt_at=now,
                last_error="",
                last_status_code=None,
                delivered_at=None,
            ):
                continue
            delivery.refresh_from_db()
            _notify(delivery)
            enqueue_on_commit(DELIVER_TASK, delivery.pk, 1)
        count += 1
    return count


def sweep(*, grace_seconds: int = 120, limit: int = 500, now: datetime | None = None) -> int:
    """Send pending deliveries whose next attempt is ``grace_seconds`` overdue (the broker lost
    or never took their message); the attempt number keeps a late original from sending twice.
    Deletes delivered and failed deliveries older than ``DELIVERY_RETENTION``. Three queries
    plus one publish per row; returns how many were sent again."""
    now = now or timezone.now()
    WebhookDelivery.objects.filter(
        status__in=[WebhookDelivery.Status.DELIVERED, WebhookDelivery.Status.FAILED],
        created_at__lt=now - DELIVERY_RETENTION,
    ).delete()
    due = list(
        WebhookDelivery.objects.filter(
            status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now - timedelta(seconds=grace_seconds)
        )
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .order_by("next_attempt_at")
        .values_list("pk", "attempts")[:limit]
    )
    return sum(send(DELIVER_TASK, pk, attempts + 1) for pk, attempts in due)
