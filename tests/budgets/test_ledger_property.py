"""Property: for any sequence of admit/evict/finish events and accounting runs, the ledger
total equals the sum of the workloads' admitted intervals, to the microsecond."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.db.models import Sum
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from budgets import services
from budgets.accounting import exact_unit_seconds
from budgets.models import Budget, BudgetCharge
from queues.models import AdmissionRecord, ResourceFlavor, WorkloadState
from queues.services import transitions
from tests.budgets.helpers import T0, budget, cluster, submit

pytestmark = pytest.mark.django_db

ACTIONS = ("admit", "evict", "finish", "account")
steps = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=1),  # which workload
        st.sampled_from((*ACTIONS, "account")),  # accounting runs a little more often
        st.one_of(st.integers(min_value=1, max_value=900), st.integers(min_value=1, max_value=8 * 3600)),  # clock moves
        st.integers(min_value=0, max_value=4 * 3600),  # how far in the past a finish is reported
    ),
    min_size=1,
    max_size=20,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(events=steps, renewal=st.sampled_from(["none", "days"]), micros=st.integers(min_value=0, max_value=999_999))
# Always tried, whatever is generated: a finish reported earlier than a run already charged
# (a correction), the same down to a zero-length interval (found by this test), and an
# eviction and re-admission across two day boundaries.
@example(events=[(0, "admit", 60, 0), (0, "account", 1800, 0), (0, "finish", 60, 1200)], renewal="none", micros=7)
@example(events=[(0, "admit", 1, 0), (0, "account", 9, 0), (0, "finish", 1, 10)], renewal="none", micros=0)
@example(
    events=[
        (0, "admit", 79_000, 0),
        (1, "admit", 5, 0),
        (0, "evict", 20_000, 0),
        (0, "account", 30, 0),
        (0, "admit", 70_000, 0),
        (1, "finish", 10, 100),
    ],
    renewal="days",
    micros=0,
)
def test_given_any_event_sequence_then_the_ledger_equals_the_admitted_intervals(events, renewal, micros):
    with transaction.atomic():
        run_sequence(events, renewal, micros)
        transaction.set_rollback(True)  # each example starts from an empty database


def run_sequence(events: list[tuple[int, str, int, int]], renewal: str, micros: int) -> None:
    cq, lq = cluster(cpu="8")
    flavor_ids = dict(ResourceFlavor.objects.values_list("name", "id"))
    team = budget(lq, hours="1000", renewal=renewal, renewal_days=1 if renewal == "days" else None)
    workloads = [submit(lq, f"w-{i}") for i in range(2)]
    clock = T0 + timedelta(microseconds=micros)
    for index, action, advance, back in events:
        clock += timedelta(seconds=advance)
        workload_id = workloads[index].pk
        if action == "admit":
            transitions.admit(
                workload_id=workload_id,
                cluster_queue_id=cq.pk,
                assignment={"cpu": "default"},
                flavor_ids=flavor_ids,
                now=clock,
                started=True,
            )
        elif action == "evict":
            transitions.evict(workload_id=workload_id, now=clock, message="test")
        elif action == "finish":
            finished = transitions.finish(
                workload_id=workload_id, at=clock - timedelta(seconds=back), outcome=WorkloadState.FINISHED
            )
            if finished:  # the slot gets a fresh workload, so the sequence keeps going
                workloads[index] = submit(lq, f"w-{index}-{len(AdmissionRecord.objects.all())}")
        else:
            services.reconcile_budget(team.pk, now=clock)
    end = clock + timedelta(seconds=1)
    services.reconcile_budget(team.pk, now=end)
    if BudgetCharge.objects.filter(kind=BudgetCharge.Kind.CORRECTION).exists():
        event("a late-reported finish was corrected")

    expected = {
        record.pk: exact_unit_seconds(1000, record.admitted_at, min(record.ended_at or end, end))
        for record in AdmissionRecord.objects.all()
    }
    charged = dict(
        BudgetCharge.objects.filter(budget=team).values_list("admission_record_id").annotate(total=Sum("unit_seconds"))
    )
    assert {pk: charged.get(pk, Decimal(0)) for pk in expected} == expected
    assert sum(charged.values(), Decimal(0)) == sum(expected.values(), Decimal(0))
    if team.renewal == Budget.Renewal.DAYS:
        for period_start, total in BudgetCharge.objects.values_list("period_start").annotate(total=Sum("unit_seconds")):
            day_end = period_start + timedelta(days=1)
            inside = sum(
                (
                    exact_unit_seconds(1000, max(r.admitted_at, period_start), min(r.ended_at or end, end, day_end))
                    for r in AdmissionRecord.objects.all()
                    if max(r.admitted_at, period_start) < min(r.ended_at or end, end, day_end)
                ),
                Decimal(0),
            )
            assert total == inside
