"""Shared fixtures. Database tests run on PostgreSQL in CI (DATABASE_URL from `make test`)."""

import pytest

from queues.demo import seed_demo


@pytest.fixture
def demo(db):
    """The demo cluster of `manage.py seed_demo`."""
    return seed_demo()
