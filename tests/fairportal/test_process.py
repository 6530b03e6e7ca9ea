"""Full garbage collections in the control loop's processes: between tasks, at most once a minute."""

from __future__ import annotations

import gc
import weakref
from types import SimpleNamespace

import pytest

from fairportal import celery as celery_app
from fairportal import process


class Cycle:
    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def scheduled():
    threshold = gc.get_threshold()
    process.schedule_full_collections()
    try:
        yield threshold, process._last_full
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()
        process._last_full = None


def test_given_scheduled_full_collections_then_old_cycles_wait_for_the_due_one(scheduled):
    before, scheduled = scheduled
    young, middle, oldest = gc.get_threshold()
    assert (young, middle) == before[:2] and oldest >= 10**9  # young collections as before; never a full one
    assert gc.get_freeze_count() > 0  # start-up's objects frozen

    old = Cycle()
    gc.collect(1)  # survives the young generations: now in the oldest
    old_ref = weakref.ref(old)
    del old
    gc.collect(1)
    assert old_ref() is not None  # garbage, but only a full collection finds it

    assert not process.collect_if_due(now=scheduled + process.FULL_COLLECTION_SECONDS - 1)
    assert old_ref() is not None
    assert process.collect_if_due(now=scheduled + process.FULL_COLLECTION_SECONDS)
    assert old_ref() is None
    assert not process.collect_if_due(now=scheduled + process.FULL_COLLECTION_SECONDS + 1)  # the next is a minute on


def test_given_a_process_that_does_not_schedule_them_then_collect_if_due_does_nothing():
    assert process._last_full is None
    assert not process.collect_if_due(now=10**9)


@pytest.mark.parametrize(
    ("queues", "schedules"),
    [(["celery", "control.0"], True), (["celery", "control.3", "control.5"], True), (["whatif"], False)],
)
def test_given_a_worker_then_only_a_control_process_schedules_its_full_collections(monkeypatch, queues, schedules):
    calls = []
    monkeypatch.setattr(process, "schedule_full_collections", lambda: calls.append(True))
    sender = SimpleNamespace(app=SimpleNamespace(amqp=SimpleNamespace(queues=SimpleNamespace(consume_from=queues))))

    celery_app.schedule_full_collections_in_control_processes(sender)

    assert bool(calls) is schedules
