"""The per-user what-if cap holds when one user starts runs from several requests at once
(PostgreSQL, real transactions, one thread and connection per request)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from playground.models import Run
from playground.services import lane
from tests.factories import UserFactory, simulation_run


@pytest.mark.django_db(transaction=True)
def test_given_six_simultaneous_starts_of_one_user_then_only_the_cap_is_stored(settings, monkeypatch):
    assert connection.vendor == "postgresql", "the cap's row lock needs PostgreSQL (make test)"
    settings.WHATIF_MAX_ACTIVE_PER_USER = 2
    user = UserFactory(username="eager")
    counted = lane.active_runs

    def slow_count(owner):  # noqa: ANN001, ANN202 - widen the window between counting and inserting
        result = counted(owner)
        threading.Event().wait(0.2)
        return result

    monkeypatch.setattr(lane, "active_runs", slow_count)
    barrier = threading.Barrier(6)
    refused: list[int] = []

    def start() -> None:
        try:
            barrier.wait(timeout=10)
            with transaction.atomic():
                lane.claim_slot(user)
                simulation_run(user)
        except lane.WhatIfLimitReached as limit:
            refused.append(limit.limit)
        finally:
            connection.close()

    threads = [threading.Thread(target=start) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert Run.objects.filter(owner=user).count() == 2
    assert refused == [2, 2, 2, 2]
