"""Shared fixtures. Database tests run on PostgreSQL in CI (DATABASE_URL from `make test`)."""

import pytest


@pytest.fixture
def demo(db):
    """The demo cluster of `manage.py seed_demo`."""
    from queues.demo import seed_demo  # imported here: engine tests run without Django

    return seed_demo()


def _reset_broker_connections(app) -> None:
    """Forget the app's cached connection and producer pools (as Celery does after a fork)."""
    app._after_fork()


@pytest.fixture
def dead_broker(monkeypatch):
    """Celery pointed at a broker URL that refuses connections (nothing listens on port 1), the
    way a request sees a broker that is down; the real broker is restored afterwards. Celery
    reads ``CELERY_BROKER_URL`` from the environment before its own setting, so both change."""
    from fairportal.celery import app

    dead = "redis://127.0.0.1:1/0"
    monkeypatch.setenv("CELERY_BROKER_URL", dead)
    monkeypatch.setattr(app.conf, "broker_url", dead)
    _reset_broker_connections(app)
    assert app.conf.broker_url == dead
    yield dead
    monkeypatch.undo()
    _reset_broker_connections(app)


@pytest.fixture(autouse=True)
def api_throttling_off(settings):
    """The suite (schemathesis included) sends thousands of API requests a minute as one user:
    throttling is configured off by setting; the throttling tests set their own rates."""
    settings.API_THROTTLE_RATES = {"user": None, "anon": None}


@pytest.fixture(autouse=True)
def fresh_cache():
    """Every test starts with an empty cache (the process's own, locmem): the dashboard's shared
    figures are kept a few seconds (``queues.selectors.live.shared``), and an earlier test's,
    from its own database, must not show on this one's pages (a browser test read 0 CPU so)."""
    from django.core.cache import cache

    cache.clear()
