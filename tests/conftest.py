"""Shared fixtures. Database tests run on PostgreSQL in CI (DATABASE_URL from `make test`)."""

import pytest


@pytest.fixture
def demo(db):
    """The demo cluster of `manage.py seed_demo`."""
    from queues.demo import seed_demo  # imported here: engine tests run without Django

    return seed_demo()
