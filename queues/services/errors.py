"""Errors the services raise for callers to turn into their own answers (400, 409, a form error)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS
from django.core.exceptions import ValidationError as DjangoValidationError


class FieldErrors(Exception):
    """Bad input, as ``{field: [messages]}``; nested rows as ``{"quotas": [{}, {"nominal": [...]}]}``.

    Django's ``ValidationError`` flattens nested dictionaries, so a write that validates an object
    together with its rows (a ClusterQueue and its quotas) reports through this instead.
    """

    def __init__(self, errors: dict[str, Any]) -> None:
        self.errors = errors
        super().__init__(errors)

    @staticmethod
    def messages(error: DjangoValidationError) -> dict[str, list[str]]:
        """A Django ``ValidationError`` as ``{field: [messages]}`` (``__all__`` kept as is)."""
        if hasattr(error, "error_dict"):
            return {name: list(messages) for name, messages in error.message_dict.items()}
        return {NON_FIELD_ERRORS: list(error.messages)}


class StopLocked(FieldErrors):
    """A change to a LocalQueue's stop that the actor's level may not make (HTTP 403 in the API, an
    error on the stop policy field in a form)."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__({"stop_policy": [message]})


class InvalidTransition(Exception):
    """A lifecycle report that does not fit the workload's current state (HTTP 409)."""

    def __init__(self, *, workload: str, action: str, state: str, reason: str) -> None:
        self.workload = workload
        self.action = action
        self.state = state
        self.reason = reason
        super().__init__(f"cannot {action} workload {workload}: it is {state}; {reason}")


class IdempotencyKeyReused(Exception):
    """The same Idempotency-Key came with a different request body (HTTP 422)."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(
            f"Idempotency-Key {key!r} was already used for a different request body; "
            "send a new key for a new submission, or the identical body to get the first result"
        )
