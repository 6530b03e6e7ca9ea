"""Thin Celery tasks for budgets: each calls one service; safe to run twice (locks, claims)."""

from __future__ import annotations

import logging

from celery import Task, shared_task

from budgets import alerts, services
from core import webhooks

logger = logging.getLogger(__name__)


@shared_task(name="budgets.reconcile_budgets", ignore_result=True)
def reconcile_budgets() -> int:
    """The beat entry: account, enforce and alert every budget."""
    return len(services.reconcile_all_budgets())


@shared_task(name="budgets.reconcile_budget", ignore_result=True)
def reconcile_budget_task(budget_id: int) -> str | None:
    """One budget right after a change to it (the allocation raised, the action changed)."""
    result = services.reconcile_budget_or_record_failure(budget_id)
    return result.hold if result else None


@shared_task(name="budgets.send_email", ignore_result=True, bind=True, max_retries=3)
def send_budget_email(self: Task, event_id: int) -> bool:
    try:
        return alerts.send_event_email(event_id)
    except Exception as error:  # noqa: BLE001 - SMTP trouble: retry later, the claim was released
        raise self.retry(exc=error, countdown=60 * (self.request.retries + 1)) from error


def webhook_backoff(retries: int) -> int:
    """Seconds before retry ``retries + 1`` before jitter: 2, 4, 8, ... capped at 10 minutes
    (``core.webhooks.backoff``; each wait is then jittered)."""
    return webhooks.backoff(retries)


@shared_task(name="budgets.post_webhook", ignore_result=True, bind=True, max_retries=None)
def post_budget_webhook(self: Task, event_id: int, attempt: int | None = None) -> bool:
    """POST one event to its budget's own URL, signed; retried with jittered exponential backoff
    like ``core.deliver_webhook`` and marked failed after ``BUDGET_WEBHOOK_MAX_RETRIES`` retries.

    Budget events are queued as ``core.deliver_webhook`` now; this name stays for messages queued
    before signed webhooks and sends through the same delivery row.
    """
    delivery = alerts.own_delivery(event_id)
    if delivery is None:
        return False
    outcome = webhooks.attempt(delivery.pk, expected_attempt=attempt)
    if outcome.retry_in is not None:
        raise self.retry(args=(event_id, outcome.attempts + 1), countdown=outcome.retry_in)
    return outcome.delivered
