"""Signed webhooks (Standard Webhooks): endpoints with their secrets, and one delivery row per
(message, endpoint). ``core.webhooks`` signs, sends and retries; docs/webhooks.md describes both.

Invariants:

* ``secret`` (and ``previous_secret`` during a rotation) is ``whsec_`` + base64 of 32 random
  bytes; it is shown once (at creation and at each rotation), never in lists, never in the
  audit trail (``core.audit`` leaves these fields out of its pictures), never logged.
* A delivery's ``body`` is the exact JSON signed on every attempt; ``message_id`` (the
  ``webhook-id`` header) is the same on every attempt of that message to that endpoint, so a
  receiver dedupes by it. ``(endpoint, message_id)`` is unique: a message is queued once.
* ``last_error`` is a fixed sentence (``core.outbound``'s or ``HTTP <status>``): never the
  receiver's answer, never the socket's or resolver's text.
"""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import models

from core import outbound

# Every event type an endpoint may subscribe to; "budget.*" takes every budget event.
POLICY_CHANGED = "policy.changed"
BUDGET_EVENT_TYPES = (
    "budget.ThresholdCrossed",
    "budget.Exhausted",
    "budget.HoldPlaced",
    "budget.HoldLifted",
    "budget.Renewed",
    "budget.AccountingFailed",
)
EVENT_TYPES = (POLICY_CHANGED, *BUDGET_EVENT_TYPES)
ALL_BUDGET_EVENTS = "budget.*"
SUBSCRIBABLE = (*EVENT_TYPES, ALL_BUDGET_EVENTS)
BUDGET_ENDPOINT_PREFIX = "budget:"  # names of the endpoints budgets' webhook_url fields own


def wants(subscribed: list[str], event_type: str) -> bool:
    """Whether an endpoint subscribed to ``subscribed`` receives ``event_type``."""
    return event_type in subscribed or (event_type.startswith("budget.") and ALL_BUDGET_EVENTS in subscribed)


class WebhookEndpoint(models.Model):
    """Where signed webhooks go. ``site`` endpoints are the admins' (any subscribed event of the
    whole site); a ``budget`` endpoint belongs to one budget's ``webhook_url`` (that budget's
    events only; its URL follows the budget's, budgets keep it in step)."""

    class Scope(models.TextChoices):
        SITE = "site", "Site (admin-configured)"
        BUDGET = "budget", "One budget's webhook_url"

    name = models.CharField(max_length=100, unique=True, help_text="A label for people, e.g. ops-automation")
    url = models.CharField(max_length=2000, help_text="http(s) URL of the receiver; public addresses only")
    events = models.JSONField(
        default=list, blank=True, help_text='Event types, e.g. ["policy.changed", "budget.*"] (see docs/webhooks.md)'
    )
    enabled = models.BooleanField(default=True)
    scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.SITE, editable=False)
    secret = models.CharField(max_length=100, editable=False)
    previous_secret = models.CharField(max_length=100, blank=True, editable=False)
    previous_secret_expires_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="The previous secret signs too until then (empty: until removed)",
    )
    secret_rotated_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def rotating(self) -> bool:
        return bool(self.previous_secret)

    def signing_secrets(self, now: datetime) -> list[str]:
        """The active secret, then the previous one while it has not expired (during a rotation
        every message carries a signature by each)."""
        secrets = [self.secret]
        if self.previous_secret and (self.previous_secret_expires_at is None or now < self.previous_secret_expires_at):
            secrets.append(self.previous_secret)
        return secrets

    def clean(self) -> None:
        super().clean()
        errors: dict[str, str] = {}
        if self.scope == self.Scope.SITE and self.name.startswith(BUDGET_ENDPOINT_PREFIX):
            errors["name"] = f"names starting with {BUDGET_ENDPOINT_PREFIX!r} are kept for budgets' own webhooks"
        try:
            outbound.check_url(self.url)
        except outbound.OutboundError as error:
            errors["url"] = str(error)
        events = self.events
        if not isinstance(events, list) or not events or len(events) > len(SUBSCRIBABLE):
            errors["events"] = f"expected a list of event types from: {', '.join(SUBSCRIBABLE)}"
        else:
            unknown = [e for e in events if e not in SUBSCRIBABLE]
            if unknown:
                shown = str(unknown[0])[:60] if isinstance(unknown[0], str) else "a non-string"
                errors["events"] = f"{shown!r} is not an event type; expected some of: {', '.join(SUBSCRIBABLE)}"
        if errors:
            raise ValidationError(errors)


class WebhookDelivery(models.Model):
    """One message to one endpoint: its signed body, and how its delivery is going."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    class Source(models.TextChoices):
        BUDGET_EVENT = "budget-event", "Budget event"
        POLICY_CHANGE = "policy-change", "Policy change"

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    message_id = models.CharField(max_length=64, help_text="The webhook-id header: the same on every attempt")
    event_type = models.CharField(max_length=40)
    source = models.CharField(max_length=20, choices=Source.choices)
    source_id = models.BigIntegerField(help_text="The BudgetEvent's or PolicyChange's id")
    body = models.TextField(help_text="The JSON signed and sent on every attempt")
    created_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(
        null=True, blank=True, editable=False, help_text="A worker is sending it until then (one sender at a time)"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "webhook deliveries"
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "message_id"], name="webhook_delivery_once_per_endpoint")
        ]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="webhook_delivery_due"),
            models.Index(fields=["source", "source_id"], name="webhook_delivery_source"),
        ]

    def __str__(self) -> str:
        return f"{self.message_id} to {self.endpoint_id}: {self.status}"
