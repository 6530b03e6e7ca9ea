"""Fixtures for the budget tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fairportal.celery import app


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    """Celery tasks run inline where they are queued (retries too, without their countdown)."""
    previous = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, False
    try:
        yield
    finally:
        app.conf.task_always_eager, app.conf.task_eager_propagates = previous
