"""Budget events and their alerts: e-mail for thresholds, a signed webhook for every event.

Events are rows written inside the accounting transaction; delivery happens afterwards in
Celery tasks (``transaction.on_commit``), so a slow mail server or a dead webhook never holds
up the control loop, and a rolled-back run announces nothing. E-mail is claimed with a
conditional UPDATE before sending, so a task delivered twice (acks-late redelivery) mails once.

Webhooks go through the kernel's signed deliveries (``core.webhooks``, docs/webhooks.md): one
to the budget's own ``webhook_url`` (signed with its own endpoint's secret) and one to each
admin endpoint subscribed to the event's type, all at-least-once until a 2xx answer (the
``webhook-id`` header, the same on every attempt, lets receivers dedupe). The event's
``webhook_*`` fields follow the delivery to the budget's own URL (``delivery_changed``).
"""

from __future__ import annotations

import logging
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.utils import timezone

from budgets.models import Budget, BudgetEvent
from budgets.status import BudgetStatus, format_hours, threshold_reached
from core import webhooks
from core.enqueue import enqueue_on_commit
from core.models import WebhookDelivery

logger = logging.getLogger(__name__)

EMAIL_KINDS = frozenset({BudgetEvent.Kind.THRESHOLD, BudgetEvent.Kind.ACCOUNTING_FAILED})


class WebhookDeliveryError(Exception):
    """The webhook did not answer 2xx; the task retries with backoff."""


# --- recording ---------------------------------------------------------------------------------


def record_event(
    budget: Budget,
    kind: str,
    status: BudgetStatus,
    message: str,
    *,
    now: datetime,
    threshold: float | int | None = None,
) -> BudgetEvent | None:
    """Write an event (None when this once-per-period event already exists) and queue its alerts."""
    period_start = status.period_start or budget.anchor
    fields = {
        "at": now,
        "used_hours": status.used_hours,
        "allocated_hours": budget.allocated_hours,
        "message": message[:500],
        "webhook_status": BudgetEvent.Delivery.PENDING if budget.webhook_url else BudgetEvent.Delivery.NONE,
    }
    if kind == BudgetEvent.Kind.THRESHOLD:
        event, created = BudgetEvent.objects.get_or_create(
            budget=budget,
            kind=kind,
            period_start=period_start,
            threshold=Decimal(str(threshold)),
            defaults=fields,
        )
    elif kind in (BudgetEvent.Kind.EXHAUSTED, BudgetEvent.Kind.RENEWED):
        event, created = BudgetEvent.objects.get_or_create(
            budget=budget, kind=kind, period_start=period_start, defaults=fields
        )
    else:
        event, created = BudgetEvent.objects.create(budget=budget, kind=kind, period_start=period_start, **fields), True
    if not created:
        return None
    _queue_delivery(event, wants_email=kind in EMAIL_KINDS and bool(budget.email_recipients()))
    return event


def record_period_events(
    budget: Budget,
    status: BudgetStatus,
    *,
    previous_period_start: datetime | None,
    used_unit_seconds: Decimal,
    now: datetime,
) -> list[BudgetEvent]:
    """Renewal, threshold crossings and exhaustion of the current period; each at most once."""
    events: list[BudgetEvent | None] = []
    if previous_period_start is not None and status.period_start != previous_period_start:
        events.append(
            record_event(
                budget,
                BudgetEvent.Kind.RENEWED,
                status,
                f"budget {budget.name} renewed: a new period started {status.period_start:%Y-%m-%d %H:%M %Z} "
                f"with {format_hours(budget.allocated_hours)} {budget.unit_label}",
                now=now,
            )
        )
    for threshold in sorted(budget.alert_thresholds or []):
        if threshold_reached(used_unit_seconds, budget.allocated_hours, threshold):
            events.append(
                record_event(
                    budget,
                    BudgetEvent.Kind.THRESHOLD,
                    status,
                    f"budget {budget.name} reached {threshold}%: {format_hours(status.used_hours)} of "
                    f"{format_hours(budget.allocated_hours)} {budget.unit_label} used this period"
                    + (" (exhausted: new work is held)" if status.exhausted else ""),
                    now=now,
                    threshold=threshold,
                )
            )
    if status.exhausted:
        events.append(
            record_event(
                budget,
                BudgetEvent.Kind.EXHAUSTED,
                status,
                f"budget {budget.name} exhausted: {format_hours(status.used_hours)} of "
                f"{format_hours(budget.allocated_hours)} {budget.unit_label} used this period",
                now=now,
            )
        )
    return [event for event in events if event is not None]


def _queue_delivery(event: BudgetEvent, *, wants_email: bool) -> None:
    # Broker down: the webhook deliveries stay pending and beat's sweep sends them later.
    if wants_email:
        enqueue_on_commit("budgets.send_email", event.pk)
    event_type = f"budget.{event.kind}"
    endpoints = webhooks.site_endpoints(event_type)
    if event.webhook_status == BudgetEvent.Delivery.PENDING:
        own = event.budget.sync_webhook_endpoint()
        if own is not None:
            endpoints.insert(0, own)
    if endpoints:
        webhooks.queue(
            endpoints,
            event_type=event_type,
            source=WebhookDelivery.Source.BUDGET_EVENT,
            source_id=event.pk,
            body=webhook_body(event),
        )


# --- delivery ----------------------------------------------------------------------------------


def send_event_email(event_id: int) -> bool:
    """Send the event's e-mail once; False when already sent or nobody is to be told."""
    event = BudgetEvent.objects.select_related("budget").filter(pk=event_id).first()
    if event is None or not event.budget.email_recipients():
        return False
    claimed = BudgetEvent.objects.filter(pk=event_id, email_sent_at__isnull=True).update(email_sent_at=timezone.now())
    if not claimed:
        return False
    budget = event.budget
    subject = f"[fairportal] {event.message}"[:200]
    body = "\n".join(
        [
            event.message,
            "",
            f"Budget:    {budget.name} ({budget.target_label})",
            f"Used:      {format_hours(event.used_hours)} of {format_hours(event.allocated_hours)} {budget.unit_label}",
            f"Period:    from {event.period_start:%Y-%m-%d %H:%M %Z}",
            f"Action when exhausted: {budget.action}",
        ]
    )
    try:
        send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, budget.email_recipients(), fail_silently=False)
    except Exception:
        BudgetEvent.objects.filter(pk=event_id).update(email_sent_at=None)  # let a retry claim it again
        raise
    return True


def webhook_payload(event: BudgetEvent) -> dict[str, Any]:
    """The JSON body POSTed to the budget's webhook (camelCase, like the rest of the API)."""
    budget = event.budget
    field, _ = budget.target_ref
    return {
        "event": event.kind,
        "eventId": event.pk,
        "at": event.at.isoformat(),
        "budget": budget.name,
        "target": {
            "kind": {"local_queue": "LocalQueue", "namespace": "Namespace", "cluster_queue": "ClusterQueue"}[field],
            "name": str(budget.target.key if field == "local_queue" else budget.target.name),
        },
        "kind": budget.kind,
        "unit": budget.unit_label,
        "periodStart": event.period_start.isoformat(),
        "threshold": float(event.threshold) if event.threshold is not None else None,
        "usedHours": float(event.used_hours),
        "allocatedHours": float(event.allocated_hours),
        "action": budget.action,
        "message": event.message,
    }


def webhook_body(event: BudgetEvent) -> dict[str, Any]:
    """The signed body: ``type`` (``budget.<kind>``), ``timestamp`` and ``data`` (the payload),
    with the payload's fields also at the top level, as receivers written before signed
    webhooks read them."""
    payload = webhook_payload(event)
    return {"type": f"budget.{event.kind}", "timestamp": event.at.isoformat(), "data": payload, **payload}


def own_delivery(event_id: int) -> WebhookDelivery | None:
    """The delivery of a pending event to its budget's own URL (queued now if it was queued
    before signed webhooks); None when there is nothing to send."""
    event = (
        BudgetEvent.objects.select_related(
            "budget__local_queue__namespace", "budget__namespace", "budget__cluster_queue", "budget__flavor"
        )
        .filter(pk=event_id)
        .first()
    )
    if event is None or event.webhook_status != BudgetEvent.Delivery.PENDING or not event.budget.webhook_url:
        return None
    endpoint = event.budget.sync_webhook_endpoint()  # the URL as stored now
    if endpoint is None:
        return None
    webhooks.queue(
        [endpoint],
        event_type=f"budget.{event.kind}",
        source=WebhookDelivery.Source.BUDGET_EVENT,
        source_id=event.pk,
        body=webhook_body(event),
        enqueue=False,
    )
    return WebhookDelivery.objects.filter(
        endpoint=endpoint, source=WebhookDelivery.Source.BUDGET_EVENT, source_id=event.pk
    ).first()


def deliver_webhook(event_id: int, *, timeout: float) -> bool:
    """POST the event to its budget's own URL once, signed; True when delivered now, False when
    there is nothing to do. Raises ``WebhookDeliveryError`` (a fixed sentence) on a non-2xx
    answer or a network error."""
    delivery = own_delivery(event_id)
    if delivery is None:
        return False
    outcome = webhooks.attempt(delivery.pk, timeout=timeout)
    if outcome.error:
        raise WebhookDeliveryError(outcome.error)
    return outcome.delivered


_EVENT_STATUS = {
    WebhookDelivery.Status.PENDING: BudgetEvent.Delivery.PENDING,
    WebhookDelivery.Status.DELIVERED: BudgetEvent.Delivery.DELIVERED,
    WebhookDelivery.Status.FAILED: BudgetEvent.Delivery.FAILED,
}


def delivery_changed(delivery: WebhookDelivery) -> None:
    """``core.webhooks.DELIVERY_OBSERVERS``: the event's ``webhook_*`` fields follow the delivery
    to its budget's own endpoint (one UPDATE; other endpoints' deliveries change nothing)."""
    if delivery.source != WebhookDelivery.Source.BUDGET_EVENT:
        return
    BudgetEvent.objects.filter(pk=delivery.source_id, budget__webhook_endpoint_id=delivery.endpoint_id).update(
        webhook_status=_EVENT_STATUS[WebhookDelivery.Status(delivery.status)],
        webhook_attempts=delivery.attempts,
        webhook_last_error=delivery.last_error[:300],
        webhook_delivered_at=delivery.delivered_at,
    )
