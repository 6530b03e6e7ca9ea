"""Budget events and their alerts: e-mail for thresholds, a webhook for every event.

Events are rows written inside the accounting transaction; delivery happens afterwards in
Celery tasks (``transaction.on_commit``), so a slow mail server or a dead webhook never holds
up the control loop, and a rolled-back run announces nothing. E-mail is claimed with a
conditional UPDATE before sending, so a task delivered twice (acks-late redelivery) mails once;
webhooks are at-least-once until a 2xx answer (the payload's ``eventId`` lets receivers dedupe).
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db.models import F
from django.utils import timezone

from budgets.models import Budget, BudgetEvent
from budgets.status import BudgetStatus, format_hours
from core import outbound
from core.enqueue import enqueue_on_commit

logger = logging.getLogger(__name__)

EMAIL_KINDS = frozenset({BudgetEvent.Kind.THRESHOLD, BudgetEvent.Kind.ACCOUNTING_FAILED})


class WebhookDeliveryError(Exception):
    """The webhook did not answer 2xx; the task retries with backoff."""


# --- recording ---------------------------------------------------------------------------------


def threshold_reached(used_unit_seconds: Decimal, allocated_hours: Decimal, threshold: float | int) -> bool:
    """Exact: ``used >= threshold% of allocated`` (a zero allocation counts as 100% used)."""
    if allocated_hours <= 0:
        return Decimal(str(threshold)) <= 100
    return used_unit_seconds * 100 >= Decimal(str(threshold)) * allocated_hours * 3600


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
    wants_webhook = event.webhook_status == BudgetEvent.Delivery.PENDING
    if not (wants_email or wants_webhook):
        return
    # Broker down: the event row stays pending, nothing is lost.
    if wants_email:
        enqueue_on_commit("budgets.send_email", event.pk)
    if wants_webhook:
        enqueue_on_commit("budgets.post_webhook", event.pk)


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


def deliver_webhook(event_id: int, *, timeout: float) -> bool:
    """POST the event once; True when delivered now, False when there is nothing to do.

    Raises ``WebhookDeliveryError`` on a non-2xx answer or a network error (the task retries).
    """
    event = (
        BudgetEvent.objects.select_related(
            "budget__local_queue__namespace", "budget__namespace", "budget__cluster_queue", "budget__flavor"
        )
        .filter(pk=event_id)
        .first()
    )
    if event is None or event.webhook_status != BudgetEvent.Delivery.PENDING or not event.budget.webhook_url:
        return False
    BudgetEvent.objects.filter(pk=event_id).update(webhook_attempts=F("webhook_attempts") + 1)
    body = json.dumps(webhook_payload(event)).encode()
    try:
        # resolved and checked again here, connected to the checked address, no redirects
        status = outbound.post_json(
            event.budget.webhook_url,
            body,
            timeout=timeout,
            headers={"Content-Type": "application/json", "User-Agent": "fairportal-budgets/1"},
        )
    except outbound.OutboundError as error:
        _note_failure(event_id, str(error))  # a fixed sentence: no network detail
        raise WebhookDeliveryError(str(error)) from None
    if not 200 <= status < 300:
        _note_failure(event_id, f"HTTP {status}")
        raise WebhookDeliveryError(f"HTTP {status}")
    BudgetEvent.objects.filter(pk=event_id, webhook_status=BudgetEvent.Delivery.PENDING).update(
        webhook_status=BudgetEvent.Delivery.DELIVERED, webhook_delivered_at=timezone.now(), webhook_last_error=""
    )
    return True


def mark_webhook_failed(event_id: int) -> None:
    """Give up after the last retry; the event shows the last error."""
    BudgetEvent.objects.filter(pk=event_id, webhook_status=BudgetEvent.Delivery.PENDING).update(
        webhook_status=BudgetEvent.Delivery.FAILED
    )


def _note_failure(event_id: int, error: str) -> None:
    BudgetEvent.objects.filter(pk=event_id).update(webhook_last_error=error[:300])
