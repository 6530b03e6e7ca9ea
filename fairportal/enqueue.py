"""The one way tasks are sent: after the commit, and a broker outage never reaches the caller.

The database is the source of truth and Redis only carries messages (DESIGN.md), so a publish
that fails is logged and handed to ``on_failure`` (what-if runs mark their row failed, so it never
hangs ``queued``); the beat schedule and the what-if reaper catch up on everything else.
Connection and retry timeouts are the ``CELERY_BROKER_*`` settings: a dead broker costs a request
about a second, never a hang.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery import Task
from django.db import transaction

logger = logging.getLogger(__name__)


def send(task: Task, *args: Any, **kwargs: Any) -> bool:
    """Publish ``task(*args, **kwargs)`` now; False (logged) when the broker cannot take it."""
    try:
        task.delay(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - any broker trouble (refused, timeout, auth) is the same to callers
        logger.warning("could not send %s%r to the broker: %s: %s", task.name, args, type(error).__name__, error)
        return False
    return True


def enqueue_on_commit(
    task: Task, *args: Any, on_failure: Callable[[], None] | None = None, **kwargs: Any
) -> None:
    """Send the task once the current transaction commits (at once outside one).

    Nothing is sent for a transaction that rolls back; ``on_failure`` runs when the publish fails.
    """

    def publish() -> None:
        if not send(task, *args, **kwargs) and on_failure is not None:
            on_failure()

    transaction.on_commit(publish)
