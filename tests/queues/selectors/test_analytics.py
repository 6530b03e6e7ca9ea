"""Wait and eviction history from the admission records, and the starved/reclaimable summary."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import Q
from django.utils import timezone

from core.access import ADMIN
from queues import services
from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.models import Cohort
from queues.selectors import analytics, history, live
from queues.selectors.structure import load_structure
from queues.services import transitions
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue

pytestmark = pytest.mark.django_db


def submit(lq, name, queued_at, cpu="1"):
    return services.submit_workload(
        local_queue=lq,
        name=name,
        pod_sets=[{"count": 1, "requests": {"cpu": cpu}}],
        queued_at=queued_at,
        duration_seconds=None,
    )


def test_given_admissions_after_known_waits_then_each_bucket_has_their_p50_and_p95_and_evictions_by_reason():
    # Given: four jobs queued at t0 and admitted 10, 20, 30 and 40 minutes later (one slot each
    # time), then one preempted and one drained by a budget.
    now = timezone.now().replace(second=0, microsecond=0)
    t0 = now - timedelta(hours=3)
    cq = make_cluster_queue("cq", cpu="1")
    lq = make_local_queue("team-a", "main", cq)
    jobs = [submit(lq, f"job-{i}", t0) for i in range(4)]
    unit = snapshot.unit_for_cluster_queue(cq.id).key
    for index, job in enumerate(jobs):
        admission.run_admission_pass(unit, now=t0 + timedelta(minutes=10 * (index + 1)))
        if index < 3:
            assert transitions.finish(workload_id=job.pk, at=t0 + timedelta(minutes=10 * (index + 1), seconds=30))
    reasons = ["Preempted: by team-b/x", "BudgetExhausted: budget b exhausted"]
    assert transitions.evict(workload_id=jobs[3].pk, now=t0 + timedelta(minutes=45), message=reasons[0])
    admission.run_admission_pass(unit, now=t0 + timedelta(minutes=50))
    assert transitions.evict(workload_id=jobs[3].pk, now=t0 + timedelta(minutes=55), message=reasons[1])

    # When
    result = analytics.wait_history(Q(local_queue_id=lq.id), history.window("6h", now))

    # Then: 15-minute buckets from t0: {10 min}, {20 min}, {30, 40 min}, and the re-admission at
    # +50 min, which waited 5 minutes since its eviction (not 50 since it was queued).
    assert result.admissions == [1, 1, 2, 1]
    assert result.p50 == [600.0, 1200.0, 1800.0, 300.0]
    assert result.p95 == [600.0, 1200.0, 2400.0, 300.0]
    assert {reason: sum(counts) for reason, counts in result.evictions.items()} == {
        "BudgetExhausted": 1,
        "Preempted": 1,
    }


def test_given_a_queue_waiting_under_its_quota_while_a_neighbour_borrows_then_it_is_starved_and_reclaimable():
    # Given: cohort org with cq-a (4 CPU) and cq-b (4 CPU); team-b fills cq-b and borrows 3 of
    # cq-a's CPU while team-a was idle; now team-a waits with 1 CPU admitted of its 4.
    org = Cohort.objects.create(name="org")
    cq_a = make_cluster_queue("cq-a", cpu="4", cohort=org)
    cq_b = make_cluster_queue("cq-b", cpu="4", cohort=org)
    team_a = make_local_queue("team-a", "main", cq_a)
    team_b = make_local_queue("team-b", "main", cq_b)
    now = timezone.now()
    submit(team_b, "big", now - timedelta(hours=1), cpu="7")
    submit(team_a, "small", now - timedelta(hours=1), cpu="1")
    admission.run_all_admission_passes(now=now - timedelta(minutes=30))
    submit(team_a, "waiting", now, cpu="2")
    admission.run_all_admission_passes(now=now)
    structure = load_structure()

    # When
    summary = analytics.starved_and_reclaimable(
        ADMIN, structure, live.admitted_usage(), live.counts_by_local_queue(), {cq_a.id: "Never", cq_b.id: "Never"}
    )

    # Then
    assert [(t.namespace, t.pending) for t in summary.tenants] == [("team-a", 1)]
    assert summary.tenants[0].share.ratio == pytest.approx(0.25)
    [row] = summary.reclaimable
    assert (row.cluster_queue, row.cohort, row.lenders, row.amounts, row.reclaim) == (
        "cq-a",
        "org",
        ["cq-b"],
        ["3 CPU"],
        False,
    )
