"""Usage sampling through the database: decay, restart, reset, series and retention."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from fairshare.policy import FairSharingPolicy
from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.models import AdmissionMode, LocalQueue, UsageSample, Workload
from queues.services import usage
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)
POLICY = FairSharingPolicy.from_mapping({"usageHalfLifeTime": "1h", "resetInactivityPeriod": "1d"})


def running_queue(cpu: str = "2"):
    cq = make_cluster_queue(cpu="8")
    lq = make_local_queue("team-a", "main", cq)
    submit(lq, "job", cpu=cpu, duration=None)
    return cq, lq


def test_given_running_work_when_sampled_each_half_life_then_usage_approaches_it():
    cq, lq = running_queue("2")
    t0 = timezone.now() - 4 * HOUR
    admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.id).key, now=t0, policy=POLICY)
    usage.sample_usage(now=t0, policy=POLICY)  # first sample: starts the clock from zero usage
    lq.refresh_from_db()
    assert lq.consumed_resources == {}

    values = []
    for step in (1, 2, 3):
        usage.sample_usage(now=t0 + step * HOUR, policy=POLICY)
        lq.refresh_from_db()
        values.append(lq.consumed_resources["cpu"] / 1000)
    assert values == pytest.approx([1.0, 1.5, 1.75])


def test_given_admission_penalty_when_sampled_then_it_is_folded_and_cleared():
    cq, lq = running_queue("2")
    t0 = timezone.now() - HOUR
    usage.sample_usage(now=t0 - HOUR, policy=POLICY)
    admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.id).key, now=t0, policy=POLICY)
    lq.refresh_from_db()
    assert lq.entry_penalty["cpu"] > 0

    usage.sample_usage(now=t0, policy=POLICY)

    lq.refresh_from_db()
    assert lq.entry_penalty == {}


def test_given_state_in_database_when_process_restarts_then_decay_continues_from_it():
    """Nothing lives in memory: a fresh read of the row carries on exactly."""
    cq, lq = running_queue("2")
    t0 = timezone.now() - 3 * HOUR
    admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.id).key, now=t0, policy=POLICY)
    usage.sample_usage(now=t0, policy=POLICY)
    usage.sample_usage(now=t0 + HOUR, policy=POLICY)
    stored = LocalQueue.objects.get(pk=lq.pk).consumed_resources["cpu"]

    usage.sample_usage(now=t0 + 2 * HOUR, policy=POLICY)

    after = LocalQueue.objects.get(pk=lq.pk).consumed_resources["cpu"]
    assert after == pytest.approx(0.5 * stored + 0.5 * 2000)


def test_given_long_silence_when_sampled_then_usage_restarts_from_zero():
    _cq, lq = running_queue("2")
    t0 = timezone.now() - 3 * timedelta(days=1)
    LocalQueue.objects.filter(pk=lq.pk).update(consumed_resources={"cpu": 50_000.0}, usage_last_update=t0)
    Workload.objects.all().delete()

    usage.sample_usage(now=t0 + timedelta(days=2), policy=POLICY)  # 2 days > resetInactivityPeriod 1d

    lq.refresh_from_db()
    assert lq.consumed_resources == {}


def test_given_short_silence_when_sampled_then_usage_only_decays():
    _cq, lq = running_queue("2")
    t0 = timezone.now() - 3 * HOUR
    LocalQueue.objects.filter(pk=lq.pk).update(consumed_resources={"cpu": 4000.0}, usage_last_update=t0)
    Workload.objects.all().delete()

    usage.sample_usage(now=t0 + HOUR, policy=POLICY)

    lq.refresh_from_db()
    assert lq.consumed_resources["cpu"] == pytest.approx(2000.0)


def test_given_sample_then_one_series_row_per_object_with_allocation_and_counts():
    cq, lq = running_queue("2")
    admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.id).key, policy=POLICY)
    submit(lq, "waiting", cpu="8")

    result = usage.sample_usage(policy=POLICY)

    assert result.rows == UsageSample.objects.count() == 3  # LocalQueue, Namespace, ClusterQueue
    row = UsageSample.objects.get(kind="localQueue", object_id=lq.id)
    assert (row.allocated, row.admitted_count, row.pending_count) == ({"cpu": 2000}, 1, 1)
    cq_row = UsageSample.objects.get(kind="clusterQueue", object_id=cq.id)
    assert cq_row.capacity == {"cpu": 8000}


def test_given_old_raw_rows_when_pruned_then_they_become_hourly_averages():
    _cq, lq = running_queue("2")
    now = timezone.now().replace(minute=30, second=0, microsecond=0)
    old_hour = (now - timedelta(days=3)).replace(minute=0)
    for minute, amount in ((0, 1000), (20, 2000), (40, 3000)):
        UsageSample.objects.create(
            sampled_at=old_hour + timedelta(minutes=minute),
            kind="localQueue",
            object_id=lq.id,
            allocated={"cpu": amount},
            consumed={"cpu": amount / 2},
        )
    UsageSample.objects.create(
        sampled_at=now - timedelta(days=90),
        kind="localQueue",
        object_id=lq.id,
        allocated={"cpu": 1},
        consumed={},
        resolution="hourly",
    )
    UsageSample.objects.create(sampled_at=now, kind="localQueue", object_id=lq.id, allocated={"cpu": 5}, consumed={})

    result = usage.prune_usage_series(now=now)

    assert (result.downsampled, result.hourly_rows, result.deleted) == (3, 1, 1)
    hourly = UsageSample.objects.get(resolution="hourly")
    assert hourly.sampled_at == old_hour
    assert hourly.allocated == {"cpu": 2000.0}
    assert UsageSample.objects.filter(resolution="raw").count() == 1


def _time_aware_history() -> tuple[LocalQueue, datetime, FairSharingPolicy]:
    """A TimeAware LocalQueue that held 8 of its ClusterQueue's 10 CPU for the first 3 of the
    last 10 hours (a 10 h window, decay long enough to ignore): the LocalQueue, now, the policy."""
    cq = make_cluster_queue(cpu="10", mode=AdmissionMode.TIME_AWARE)
    lq = make_local_queue("team-a", "main", cq)
    now = timezone.now()
    policy = FairSharingPolicy.from_mapping({"usageWindow": {"size": "10h"}, "usageHalfLifeTime": "1000d"})
    start = now - timedelta(hours=10)
    UsageSample.objects.create(sampled_at=start, kind="localQueue", object_id=lq.id, allocated={"cpu": 8000})
    UsageSample.objects.create(
        sampled_at=start + timedelta(hours=3), kind="localQueue", object_id=lq.id, allocated={"cpu": 0}
    )
    UsageSample.objects.create(
        sampled_at=start, kind="clusterQueue", object_id=cq.id, allocated={}, capacity={"cpu": 10000}
    )
    return lq, now, policy


def test_given_time_aware_scope_when_sampled_then_history_share_is_usage_over_capacity():
    lq, now, policy = _time_aware_history()

    usage.sample_usage(now=now, policy=policy)

    lq.refresh_from_db()
    # 8 CPU x 3h out of 10 CPU x 10h: KAI's 0.24 example (half-life long enough to ignore decay)
    assert lq.historical_share["cpu"] == pytest.approx(0.24, rel=1e-3)


@pytest.mark.parametrize("set_based", [True, False])
def test_given_an_unchanged_history_share_when_sampled_again_then_its_row_is_not_rewritten(set_based):
    lq, now, policy = _time_aware_history()
    usage.sample_usage(now=now, policy=policy, set_based=set_based)
    first = LocalQueue.objects.get(pk=lq.pk).historical_share

    with CaptureQueriesContext(connection) as same:  # nothing admitted since: the same window
        usage.sample_usage(now=now, policy=policy, set_based=set_based)
    LocalQueue.objects.filter(pk=lq.pk).update(historical_share={"cpu": 0.5})
    with CaptureQueriesContext(connection) as changed:
        usage.sample_usage(now=now, policy=policy, set_based=set_based)

    def rewrites(queries):
        return [query["sql"] for query in queries.captured_queries if "SET historical_share" in query["sql"]]

    assert first["cpu"] == pytest.approx(0.24, rel=1e-3)
    assert rewrites(same) == []
    assert len(rewrites(changed)) == 1
    assert LocalQueue.objects.get(pk=lq.pk).historical_share == first


def test_given_work_in_a_nested_cohort_when_sampled_then_every_cohort_sample_counts_its_subtree():
    # Given: org -> research -> cq-r (2 admitted of 3, 1 pending) and org -> cq-o (1 admitted).
    from queues.models import Cohort

    org = Cohort.objects.create(name="org")
    research = Cohort.objects.create(name="research", parent=org)
    cq_r = make_cluster_queue("cq-r", cpu="2", cohort=research, borrowing_limit="0")
    cq_o = make_cluster_queue("cq-o", cpu="4", cohort=org)
    lq_r = make_local_queue("team-r", "main", cq_r)
    lq_o = make_local_queue("team-o", "main", cq_o)
    for name in ("r1", "r2", "r3"):
        submit(lq_r, name, cpu="1", duration=None)
    submit(lq_o, "o1", cpu="1", duration=None)
    moment = timezone.now()
    admission.run_all_admission_passes(now=moment)

    # When
    usage.sample_usage(now=moment, policy=POLICY)

    # Then: the cohort rows carry the counts their cards show, not zeros.
    def counts(cohort):
        row = UsageSample.objects.get(kind=UsageSample.Kind.COHORT, object_id=cohort.id)
        return row.admitted_count, row.pending_count

    assert counts(research) == (2, 1)
    assert counts(org) == (3, 1)
