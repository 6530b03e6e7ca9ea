"""Two accounting runs at once never double-charge (PostgreSQL, real transactions, threads)."""

from __future__ import annotations

import itertools
import threading
import time
from datetime import datetime
from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import Sum

from budgets import accounting, services
from budgets.models import BudgetCharge
from queues.models import AdmissionRecord
from tests.budgets.helpers import admission_pass, at, budget, cluster, finish, submit


@pytest.fixture
def slow_accounting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Widen the window between reading the ledger and appending to it, so runs overlap."""
    original = accounting.charge_quantity

    def slow(*args: object, **kwargs: object) -> int:
        time.sleep(0.05)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(accounting, "charge_quantity", slow)


def run_at_once(budget_id: int, moments: list[datetime]) -> list[BaseException]:
    """One thread per moment, released together; each uses its own database connection."""
    barrier = threading.Barrier(len(moments))
    errors: list[BaseException] = []

    def worker(moment: datetime) -> None:
        try:
            barrier.wait(timeout=10)
            services.reconcile_budget(budget_id, now=moment)
        except BaseException as error:  # noqa: BLE001 - reported to the test
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(moment,)) for moment in moments]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return errors


def assert_tiled(budget_id: int) -> None:
    """Every interval's lines are back to back: no gap, no overlap."""
    for record in AdmissionRecord.objects.all():
        spans = list(
            BudgetCharge.objects.filter(budget_id=budget_id, admission_record=record)
            .order_by("charged_from")
            .values_list("charged_from", "charged_to")
        )
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert start == end


@pytest.mark.skipif(connection.vendor != "postgresql", reason="advisory locks and real concurrency need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_given_two_runs_at_the_same_moment_then_the_second_charges_nothing(slow_accounting):
    cq, lq = cluster()
    team = budget(lq, hours="10")
    done = submit(lq, "done")
    submit(lq, "open")
    admission_pass(cq, at())
    services.reconcile_budget(team.pk, now=at(minutes=1))  # both racers start from the same ledger
    finish(done, at(minutes=10))

    errors = run_at_once(team.pk, [at(hours=1), at(hours=1)])

    assert errors == []
    assert BudgetCharge.objects.count() == 4  # one line per interval per run that found something new
    assert BudgetCharge.objects.aggregate(total=Sum("unit_seconds"))["total"] == Decimal(600 + 3600)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="advisory locks and real concurrency need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_given_four_runs_racing_with_different_clocks_then_every_interval_is_charged_exactly_once(slow_accounting):
    cq, lq = cluster()
    team = budget(lq, hours="10")
    jobs = [submit(lq, f"job-{i}") for i in range(3)]
    admission_pass(cq, at())
    finish(jobs[0], at(minutes=5))
    services.reconcile_budget(team.pk, now=at(minutes=1))

    errors = run_at_once(team.pk, [at(minutes=20), at(minutes=40), at(minutes=30), at(minutes=40)])

    assert errors == []
    assert_tiled(team.pk)
    # job-0: 5 min; job-1 and job-2 open: charged to the latest clock, 40 min each, whatever the order.
    assert BudgetCharge.objects.aggregate(total=Sum("unit_seconds"))["total"] == Decimal(300 + 2 * 2400)


@pytest.mark.django_db
def test_given_two_lines_starting_at_the_same_point_then_the_database_refuses_the_second():
    cq, lq = cluster()
    team = budget(lq, hours="10")
    job = submit(lq, "job")
    admission_pass(cq, at())
    record = AdmissionRecord.objects.get()
    line = {
        "budget": team,
        "workload": job,
        "admission_record": record,
        "period_start": at(),
        "charged_from": at(),
        "charged_to": at(minutes=1),
        "quantity": 1000,
        "unit_seconds": Decimal(60),
    }
    BudgetCharge.objects.create(**line)

    with pytest.raises(IntegrityError), transaction.atomic():
        BudgetCharge.objects.create(**{**line, "charged_to": at(minutes=2), "unit_seconds": Decimal(120)})


@pytest.mark.skipif(connection.vendor != "postgresql", reason="advisory locks and real concurrency need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_given_a_reconcile_lifting_a_hold_when_the_budget_is_deleted_meanwhile_then_no_deadlock(monkeypatch):
    """Two connections: the accounting run has deleted the hold row and is about to record the
    HoldLifted event; the API DELETE of the budget starts then. Without the budget lock the DELETE
    held the budget row and waited for the hold row, the run held the hold row and waited for the
    budget row: PostgreSQL killed one of them ("deadlock detected")."""
    from django.contrib.auth import get_user_model
    from rest_framework.test import APIClient

    from budgets import enforcement
    from budgets.models import Budget
    from queues.models import QueueHold

    _cq, lq = cluster()
    team = budget(lq, hours="0")
    services.reconcile_budget(team.pk, now=at(minutes=1))  # a zero budget is exhausted: held
    assert QueueHold.objects.exists()
    Budget.objects.filter(pk=team.pk).update(allocated_hours=Decimal(10))  # the next run lifts the hold
    admin = get_user_model().objects.create_user("ops", is_staff=True)
    hold_deleted, delete_started = threading.Event(), threading.Event()
    original_lift = enforcement.lift_hold

    def lift_then_wait(*args: object, **kwargs: object) -> None:
        original_lift(*args, **kwargs)
        if threading.current_thread().name == "reconcile":
            hold_deleted.set()
            delete_started.wait(timeout=10)
            wait_until_another_connection_waits_for_a_lock()  # the DELETE got as far as it can

    def wait_until_another_connection_waits_for_a_lock() -> None:
        with connection.cursor() as cursor:
            for _ in range(200):
                cursor.execute("SELECT pg_stat_clear_snapshot()")  # activity is snapshotted per transaction
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
                )
                if cursor.fetchone()[0]:
                    return
                time.sleep(0.05)
        raise AssertionError("the DELETE never waited for the run")

    monkeypatch.setattr(enforcement, "lift_hold", lift_then_wait)
    outcomes: dict[str, object] = {}

    def reconcile_run() -> None:
        try:
            outcomes["reconcile"] = services.reconcile_budget(team.pk, now=at(minutes=2)).hold
        except BaseException as error:  # noqa: BLE001 - reported to the test
            outcomes["reconcile"] = error
        finally:
            connection.close()

    def api_delete() -> None:
        try:
            hold_deleted.wait(timeout=10)
            client = APIClient()
            client.force_authenticate(admin)
            delete_started.set()
            outcomes["delete"] = client.delete(f"/api/v1/budgets/{team.pk}/").status_code
        except BaseException as error:  # noqa: BLE001 - reported to the test
            outcomes["delete"] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=reconcile_run, name="reconcile"), threading.Thread(target=api_delete)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert outcomes == {"reconcile": "lifted", "delete": 204}
    assert not Budget.objects.filter(pk=team.pk).exists()
    assert not QueueHold.objects.exists()
