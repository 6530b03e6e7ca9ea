"""Thin Celery tasks for budgets: each calls one service; safe to run twice (locks, claims)."""

from __future__ import annotations

import logging

from celery import Task, shared_task
from django.conf import settings

from budgets import alerts, services

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
    """Seconds before retry ``retries + 1``: 2, 4, 8, ... capped at 10 minutes."""
    return min(600, settings.BUDGET_WEBHOOK_BACKOFF_SECONDS * 2**retries)


@shared_task(name="budgets.post_webhook", ignore_result=True, bind=True, max_retries=None)
def post_budget_webhook(self: Task, event_id: int) -> bool:
    """POST one event; retried with exponential backoff, marked failed after the last try.

    The task's own limit is off (``max_retries=None``): ``BUDGET_WEBHOOK_MAX_RETRIES`` decides,
    so the event row can be marked failed instead of the task just dying.
    """
    try:
        return alerts.deliver_webhook(event_id, timeout=settings.BUDGET_WEBHOOK_TIMEOUT_SECONDS)
    except alerts.WebhookDeliveryError as error:
        if self.request.retries >= settings.BUDGET_WEBHOOK_MAX_RETRIES:
            alerts.mark_webhook_failed(event_id)
            logger.warning(
                "budget event %s: webhook failed after %d tries: %s", event_id, self.request.retries + 1, error
            )
            return False
        raise self.retry(exc=error, countdown=webhook_backoff(self.request.retries)) from error
