"""The Prometheus usage source gives the same TimeAware fair shares as the built-in series."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from django.test import override_settings

from fairshare.admission.planner import plan
from fairshare.policy import FairSharingPolicy
from queues.admission import load as snapshot
from queues.models import AdmissionMode, LocalQueue, UsageSample
from queues.services import usage
from tests.queues.interop.prometheus_server import backfill, prometheus
from tests.queues.interop.test_prometheus_live import openmetrics
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

STEP = 60
POLICY = FairSharingPolicy.from_mapping(
    {"usageHalfLifeTime": "2h", "usageSamplingInterval": "1m", "usageWindow": {"size": "5h", "type": "sliding"}}
)


def fair_shares_after_sample(now: int) -> tuple[dict, dict]:
    """Sample at ``now`` (which refreshes the history) and plan: (historical shares, fair shares)."""
    usage.sample_usage(now=datetime.fromtimestamp(now, tz=UTC), policy=POLICY)
    shares = {str(lq): lq.historical_share for lq in LocalQueue.objects.select_related("namespace")}
    unit = snapshot.admission_units()[0]
    loaded = snapshot.build_snapshot(unit, POLICY)
    return shares, dict(plan(loaded.snapshot, float(now)).fair_shares)


@pytest.mark.django_db
def test_given_same_history_when_read_from_prometheus_or_the_series_then_fair_shares_are_equal(tmp_path):
    # Given one TimeAware ClusterQueue (16 CPUs: the whole cluster) and two LocalQueues with six
    # hours of per-minute history: team-a ran 4 CPUs early on, team-b 8 CPUs lately.
    cq = make_cluster_queue(cpu="16", mode=AdmissionMode.TIME_AWARE)
    lq_a = make_local_queue("team-a", "main", cq)
    lq_b = make_local_queue("team-b", "main", cq)
    for lq in (lq_a, lq_b):
        for index in range(3):
            submit(lq, f"{lq.namespace.name}-{index}", cpu="8")
    now = (int(time.time()) // STEP) * STEP - 10 * STEP
    start = now - 6 * 3600
    grid = range(start, now, STEP)
    a = [(t, 4.0 if t < start + 2 * 3600 else 0.0) for t in grid]
    b = [(t, 8.0 if t >= start + 4 * 3600 else 0.0) for t in grid]
    for (t, amount_a), (_, amount_b) in zip(a, b):
        at = datetime.fromtimestamp(t, tz=UTC)
        UsageSample.objects.create(
            sampled_at=at, kind="localQueue", object_id=lq_a.id, allocated={"cpu": amount_a * 1000}
        )
        UsageSample.objects.create(
            sampled_at=at, kind="localQueue", object_id=lq_b.id, allocated={"cpu": amount_b * 1000}
        )
        UsageSample.objects.create(sampled_at=at, kind="clusterQueue", object_id=cq.id, capacity={"cpu": 16000})
    builtin_history, builtin_shares = fair_shares_after_sample(now)

    # The same history in a real Prometheus, as fairportal's /metrics would have exported it
    series = (
        'fairportal_local_queue_admitted_usage{{namespace="{ns}",local_queue="main",cluster_queue="cq",resource="cpu"}}'
    )
    storage = tmp_path / "tsdb"
    storage.mkdir()
    backfill(
        openmetrics(
            {
                series.format(ns="team-a"): [*a, (now, 0.0)],
                series.format(ns="team-b"): [*b, (now, 0.0)],
                'fairportal_cluster_capacity{resource="cpu"}': [(t, 16.0) for t in grid] + [(now, 16.0)],
            }
        ),
        storage,
    )
    LocalQueue.objects.update(historical_share={})
    with prometheus(tmp_path, storage=storage) as url, override_settings(PROMETHEUS_URL=url):
        prometheus_history, prometheus_shares = fair_shares_after_sample(now + 1)

    # Then both sources give the same normalised usage and the same TimeAware fair shares
    for key, shares in builtin_history.items():
        assert shares["cpu"] > 0
        assert prometheus_history[key]["cpu"] == pytest.approx(shares["cpu"], rel=1e-3)
    assert builtin_history["team-b/main"]["cpu"] > builtin_history["team-a/main"]["cpu"]
    assert prometheus_shares == builtin_shares
    assert builtin_shares["localQueue:team-a/main"]["cpu"] > builtin_shares["localQueue:team-b/main"]["cpu"]
