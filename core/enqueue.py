"""The one way tasks are sent: after the commit, and a broker outage never reaches the caller.

The database is the source of truth and Redis only carries messages (docs/design.md), so a publish
that fails is logged and handed to ``on_failure`` (what-if runs mark their row failed, so it never
hangs ``queued``); the beat schedule and the what-if reaper catch up on everything else.
Connection and retry timeouts are the ``CELERY_BROKER_*`` settings: a dead broker costs a request
about a second, never a hang.

A task is given as the task or by its registered name (``"queues.admission_pass"``): services send
their own app's tasks by name, so they never import the task modules that import them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery import Task, current_app
from django.db import transaction

logger = logging.getLogger(__name__)


def registered(task: Task | str) -> Task:
    """The task itself, or the one registered under that name (a name nobody registered raises)."""
    if not isinstance(task, str):
        return task
    app = current_app  # the project's Celery app (fairportal.celery), without importing the config
    if task not in app.tasks:
        app.autodiscover_tasks(force=True)  # a web process imports the tasks modules on first use
    return app.tasks[task]


def send(task: Task | str, *args: Any, **kwargs: Any) -> bool:
    """Publish ``task(*args, **kwargs)`` now; False (logged) when the broker cannot take it."""
    task = registered(task)
    try:
        task.delay(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - any broker trouble (refused, timeout, auth) is the same to callers
        logger.warning("could not send %s%r to the broker: %s: %s", task.name, args, type(error).__name__, error)
        return False
    return True


def enqueue_on_commit(
    task: Task | str, *args: Any, on_failure: Callable[[], None] | None = None, **kwargs: Any
) -> None:
    """Send the task once the current transaction commits (at once outside one).

    Nothing is sent for a transaction that rolls back; ``on_failure`` runs when the publish fails.
    """

    def publish() -> None:
        if not send(task, *args, **kwargs) and on_failure is not None:
            on_failure()

    transaction.on_commit(publish)
