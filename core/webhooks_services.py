"""Admins' writes of webhook endpoints, each through the one audited write path (``core.audit``).

The secret is generated here and returned once (creation, rotation); the audit pictures leave it
out (``core.audit``'s ``_NOT_POLICY``), so a rotation shows as a new ``secret_rotated_at``.
A budget's own endpoint (scope ``budget``) follows its budget's ``webhook_url``: only its secret
is managed here (``BudgetEndpointError`` for the rest).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from core import webhooks
from core.audit import audited_delete, audited_write
from core.models import Surface, WebhookEndpoint

MAX_ROTATION_OVERLAP = timedelta(days=30)


class BudgetEndpointError(Exception):
    """A write only the budget may make (its URL, events, switch, existence)."""

    def __init__(self, endpoint: WebhookEndpoint) -> None:
        super().__init__(
            f"endpoint {endpoint.name} belongs to a budget: change or clear the budget's webhook_url instead"
        )


def create_endpoint(
    *, name: str, url: str, events: list[str], enabled: bool = True, actor: Any = None, surface: str = Surface.API
) -> tuple[WebhookEndpoint, str]:
    """A site endpoint with a new secret, validated (``ValidationError`` naming the field) and
    audited; returns the endpoint and its secret (shown to the caller once, kept nowhere else)."""
    endpoint = WebhookEndpoint(name=name, url=url, events=events, enabled=enabled, secret=webhooks.new_secret())
    endpoint.full_clean()
    with audited_write(endpoint, actor=actor, surface=surface):
        endpoint.save()
    return endpoint, endpoint.secret


def update_endpoint(
    endpoint: WebhookEndpoint, changes: dict[str, Any], *, actor: Any = None, surface: str = Surface.API
) -> WebhookEndpoint:
    """Change a site endpoint's name, url, events or switch (validated, audited)."""
    if endpoint.scope != WebhookEndpoint.Scope.SITE:
        raise BudgetEndpointError(endpoint)
    for field in ("name", "url", "events", "enabled"):
        if field in changes:
            setattr(endpoint, field, changes[field])
    endpoint.full_clean()
    with audited_write(endpoint, actor=actor, surface=surface):
        endpoint.save(update_fields=["name", "url", "events", "enabled"])
    return endpoint


def delete_endpoint(endpoint: WebhookEndpoint, *, actor: Any = None, surface: str = Surface.API) -> None:
    """Delete a site endpoint and its deliveries (audited)."""
    if endpoint.scope != WebhookEndpoint.Scope.SITE:
        raise BudgetEndpointError(endpoint)
    audited_delete(endpoint, actor=actor, surface=surface)


def rotate(
    endpoint: WebhookEndpoint,
    *,
    keep_previous_for: timedelta | None = timedelta(days=1),
    actor: Any = None,
    surface: str = Surface.API,
) -> str:
    """A new secret (returned, shown once). The old one keeps signing for ``keep_previous_for``
    (``None``: until ``end_rotation``; zero: not at all), so receivers can switch without a gap.
    Audited: the picture shows the new ``secret_rotated_at`` and the previous secret's expiry."""
    now = timezone.now()
    until: datetime | None = None if keep_previous_for is None else now + min(keep_previous_for, MAX_ROTATION_OVERLAP)
    with audited_write(endpoint, actor=actor, surface=surface, note="secret rotated"):
        endpoint.refresh_from_db()
        return webhooks.rotate_secret(endpoint, keep_previous_until=until, now=now)


def end_rotation(endpoint: WebhookEndpoint, *, actor: Any = None, surface: str = Surface.API) -> None:
    """Only the active secret signs from now on (audited)."""
    with audited_write(endpoint, actor=actor, surface=surface, note="previous secret removed"):
        endpoint.refresh_from_db()
        webhooks.drop_previous_secret(endpoint)
