"""Errors the services raise for callers to turn into their own answers (400, 409, a form error);
the API's answers are registered in ``queues.api.errors``. ``FieldErrors`` is the kernel's."""

from __future__ import annotations

from core.errors import FieldErrors

__all__ = ["FieldErrors", "IdempotencyKeyReused", "InvalidTransition", "StillUsed", "StopLocked"]


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


class StillUsed(Exception):
    """A delete refused because rows still refer to the object (admitted work among them, often);
    nothing was written. ``message`` names what, for a page or an answer (HTTP 409)."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)
