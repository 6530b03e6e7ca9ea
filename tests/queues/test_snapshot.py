"""The bridge: admitted work the pass cannot evict is loaded as totals, and the plan is the same."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from fairshare.admission.planner import plan
from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.models import AdmissionMode, Cohort, QueueHold, Workload, WorkloadState
from queues.services import transitions
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

pytestmark = pytest.mark.django_db


def busy_unit(mode: str, rng: random.Random) -> snapshot.AdmissionUnit:
    """Three ClusterQueues borrowing in one cohort, namespaces with hard quotas, work admitted and waiting."""
    cohort = Cohort.objects.create(name="org")
    queues = [
        make_cluster_queue(f"cq-{i}", cpu=str(12 + 4 * i), cohort=cohort, mode=mode, borrowing_limit="4")
        for i in range(3)
    ]
    local_queues = [
        make_local_queue(f"team-{n}", f"q{i}", queues[(n + i) % 3], weight=str(1 + i), ns_quota=str(14 + n))
        for n in range(4)
        for i in range(2)
    ]
    for index in range(60):
        submit(
            rng.choice(local_queues), f"job-{index}", cpu=str(rng.choice([1, 1, 2, 3])), priority=rng.choice([0, 0, 5])
        )
    unit = snapshot.unit_for_cluster_queue(queues[0].id)
    admission.run_admission_pass(unit.key, now=timezone.now() - timedelta(minutes=30))
    ending = [
        pk
        for pk in Workload.objects.filter(state=WorkloadState.ADMITTED).values_list("id", flat=True)
        if rng.random() < 0.3
    ]
    transitions.finish_many([transitions.Finish(pk, timezone.now() - timedelta(minutes=5)) for pk in ending])
    for index in range(60, 80):
        submit(rng.choice(local_queues), f"job-{index}", cpu=str(rng.choice([1, 2])))
    return unit


def decisions(loaded: snapshot.LoadedSnapshot, now: float) -> tuple:
    result = plan(loaded.snapshot, now)
    return (
        [(a.workload, a.cluster_queue, dict(a.assignment), dict(a.penalty)) for a in result.admissions],
        [(e.workload, e.code) for e in result.evictions],
        [(r.workload, r.code, r.message, r.position) for r in result.pending],
    )


@pytest.mark.parametrize(
    "mode",
    [
        AdmissionMode.USAGE_BASED,
        AdmissionMode.DOMINANT_RESOURCE_SHARE,
        AdmissionMode.NO_FAIR_SHARING,
        AdmissionMode.TIME_AWARE,
    ],
)
def test_given_no_preemption_then_admitted_totals_plan_exactly_like_every_workload(mode):
    unit = busy_unit(mode, random.Random(mode))
    now = timezone.now().timestamp()

    totals = snapshot.build_snapshot(unit, settings.FAIR_SHARING)
    every = snapshot.build_snapshot(unit, settings.FAIR_SHARING, aggregate_admitted=False)

    running = Workload.objects.filter(state=WorkloadState.ADMITTED).count()
    assert totals.aggregated == running > 0
    assert sum(w.admitted for w in totals.snapshot.workloads) < running  # fewer entries than workloads
    outcome = decisions(totals, now)
    assert outcome[0] and outcome[2]  # something to admit and something left waiting
    assert outcome == decisions(every, now)


def test_given_a_queue_that_may_preempt_then_every_running_workload_is_loaded():
    unit = busy_unit(AdmissionMode.USAGE_BASED, random.Random(1))
    from queues.models import ClusterQueue

    ClusterQueue.objects.filter(name="cq-2").update(preemption_within_cluster_queue="LowerPriority")

    loaded = snapshot.build_snapshot(unit, settings.FAIR_SHARING)

    assert loaded.aggregated == 0
    admitted = {w.key for w in loaded.snapshot.workloads if w.admitted}
    assert admitted == {
        f"{w.namespace.name}/{w.name}"
        for w in Workload.objects.filter(state=WorkloadState.ADMITTED).select_related("namespace")
    }


def test_given_a_draining_hold_then_that_queue_runs_one_by_one_and_is_evicted():
    unit = busy_unit(AdmissionMode.USAGE_BASED, random.Random(2))
    held = Workload.objects.filter(state=WorkloadState.ADMITTED).select_related("local_queue").first().local_queue
    QueueHold.objects.create(local_queue=held, message="exhausted", drain=True, source="budget:1")
    running_there = set(held.workloads.filter(state=WorkloadState.ADMITTED).values_list("id", flat=True))

    result = admission.run_admission_pass(unit.key)

    assert {
        Workload.objects.get(namespace__name=key.split("/")[0], name=key.split("/")[1]).id for key in result.evicted
    } == running_there
    assert not held.workloads.filter(state=WorkloadState.ADMITTED).exists()


def test_given_a_priority_raised_between_passes_then_the_next_pass_sees_it():
    """Pending workloads are reused from the previous pass only while what can change is unchanged."""
    cq = make_cluster_queue(cpu="1")
    lq = make_local_queue("team-a", "main", cq)
    submit(lq, "running")
    older = submit(lq, "older")
    newer = submit(lq, "newer")
    key = snapshot.unit_for_cluster_queue(cq.id).key
    admission.run_admission_pass(key)
    assert Workload.objects.with_queue_position().get(pk=newer.pk).queue_position == 2

    Workload.objects.filter(pk=newer.pk).update(priority=100)
    admission.run_admission_pass(key)

    positions = dict(
        Workload.objects.with_queue_position().filter(state=WorkloadState.PENDING).values_list("name", "queue_position")
    )
    assert positions == {"newer": 1, "older": 2}
    assert older.pk != newer.pk


needs_row_versions = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="row versions (xmin) are PostgreSQL's"
)


@needs_row_versions
@pytest.mark.django_db(transaction=True)
def test_given_rows_changed_between_passes_then_what_a_pass_reuses_plans_like_a_cold_read():
    """Between committed passes a snapshot reuses unchanged rows by their version; changes show."""
    rng = random.Random(7)
    unit = busy_unit(AdmissionMode.USAGE_BASED, rng)
    admission.run_admission_pass(unit.key)  # warms this process's reuse of pending rows and totals
    waiting = list(Workload.objects.filter(state=WorkloadState.PENDING).order_by("id"))
    Workload.objects.filter(pk=waiting[-1].pk).update(priority=500)
    Workload.objects.filter(pk=waiting[0].pk).update(state=WorkloadState.CANCELLED)
    running = Workload.objects.filter(state=WorkloadState.ADMITTED).order_by("id").first()
    transitions.finish_many([transitions.Finish(running.pk, timezone.now())])
    submit(waiting[1].local_queue, "late-arrival", cpu="1")
    now = timezone.now().timestamp()

    warm = snapshot.build_snapshot(unit, settings.FAIR_SHARING)
    snapshot.clear_caches()
    cold = snapshot.build_snapshot(unit, settings.FAIR_SHARING)

    assert sorted(warm.workload_ids.items()) == sorted(cold.workload_ids.items())
    assert warm.current_reasons == cold.current_reasons
    assert warm.aggregated == cold.aggregated
    changed = {w.key: w for w in warm.snapshot.workloads}
    assert changed[f"{waiting[-1].namespace.name}/{waiting[-1].name}"].priority == 500
    assert f"{waiting[0].namespace.name}/{waiting[0].name}" not in changed
    assert decisions(warm, now) == decisions(cold, now)


@needs_row_versions
@pytest.mark.django_db(transaction=True)
def test_given_nothing_changed_then_the_next_snapshot_reuses_what_it_read():
    unit = busy_unit(AdmissionMode.DOMINANT_RESOURCE_SHARE, random.Random(3))
    first = snapshot.build_snapshot(unit, settings.FAIR_SHARING)

    again = snapshot.build_snapshot(unit, settings.FAIR_SHARING)

    assert again.snapshot == first.snapshot
    waiting = [w for w in first.snapshot.workloads if not w.admitted]
    assert waiting and all(a is b for a, b in zip((w for w in again.snapshot.workloads if not w.admitted), waiting))
