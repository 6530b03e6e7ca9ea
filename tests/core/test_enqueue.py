"""Every task goes through ``core.enqueue``: after the commit, and a dead broker is logged,
never raised (the caller's ``on_failure`` runs instead)."""

from __future__ import annotations

import logging
import time

import pytest
from celery.exceptions import NotRegistered
from django.db import transaction

from core.enqueue import enqueue_on_commit, registered, send
from queues.tasks import sample_usage

pytestmark = pytest.mark.django_db(transaction=True)


def test_given_a_broker_that_refuses_connections_when_sending_then_false_and_logged_quickly(dead_broker, caplog):
    started = time.perf_counter()
    with caplog.at_level(logging.WARNING, logger="core.enqueue"):
        assert send(sample_usage) is False
    assert time.perf_counter() - started < 10
    assert "could not send queues.sample_usage" in caplog.text


def test_given_a_dead_broker_when_the_transaction_commits_then_on_failure_runs(dead_broker):
    failures: list[str] = []
    with transaction.atomic():
        enqueue_on_commit(sample_usage, on_failure=lambda: failures.append("unsent"))
        assert failures == []  # nothing is sent before the commit
    assert failures == ["unsent"]


def test_given_a_rolled_back_transaction_then_nothing_is_sent(dead_broker):
    failures: list[str] = []
    with pytest.raises(RuntimeError), transaction.atomic():
        enqueue_on_commit(sample_usage, on_failure=lambda: failures.append("unsent"))
        raise RuntimeError("rolled back")
    assert failures == []


def test_given_a_registered_name_when_sending_then_it_is_that_task(dead_broker, caplog):
    with caplog.at_level(logging.WARNING, logger="core.enqueue"):
        assert send("queues.sample_usage") is False
    assert "could not send queues.sample_usage" in caplog.text
    assert registered("queues.sample_usage").name == sample_usage.name


def test_given_a_name_no_task_has_when_sending_then_it_raises_rather_than_being_logged(dead_broker):
    with pytest.raises(NotRegistered):
        send("queues.no_such_task")
