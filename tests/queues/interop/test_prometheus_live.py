"""A real Prometheus (Debian's binary, started by the test on a free loopback port) scrapes
fairportal's ``/metrics`` from a live server, and the TimeAware usage source reads history back
through Prometheus's HTTP API."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from fairshare.policy import FairSharingPolicy
from fairshare.usage.usage import windowed_usage
from queues.interop.kueue.apply import import_manifests
from queues.interop.prometheus import PrometheusClient, PrometheusError
from queues.interop.usage_source import PrometheusUsageSource
from queues.models import LocalQueue
from tests.queues.interop.prometheus_server import backfill, free_port, prometheus, wait_for


def scrape_job(live_server, token: str = "") -> dict:
    host = live_server.url.split("://", 1)[1]
    job = {"job_name": "fairportal", "metrics_path": reverse("metrics"), "static_configs": [{"targets": [host]}]}
    if token:
        job["authorization"] = {"type": "Bearer", "credentials": token}
    return job


@pytest.mark.django_db(transaction=True)
def test_given_live_server_when_prometheus_scrapes_it_then_decayed_usage_reads_back(
    live_server, tmp_path, settings, cluster_v1beta2
):
    settings.METRICS_TOKEN = "scrape-secret"
    import_manifests(cluster_v1beta2, dry_run=False)
    LocalQueue.objects.filter(namespace__name="team-vision", name="training").update(
        consumed_resources={"cpu": 2500.0, "nvidia.com/gpu": 1250.0}
    )

    with prometheus(tmp_path, [scrape_job(live_server, token="scrape-secret")]) as url:
        result = wait_for(
            url, 'fairportal_local_queue_decayed_usage{namespace="team-vision",resource="nvidia.com/gpu"}'
        )
        up = wait_for(url, 'up{job="fairportal"} == 1')

    assert [(r["metric"]["local_queue"], float(r["value"][1])) for r in result] == [("training", 1.25)]
    assert result[0]["metric"]["cluster_queue"] == "gpu-training"
    assert up, "the scrape target never came up"


def openmetrics(series: dict[str, list[tuple[int, float]]]) -> str:
    """``{'name{labels}': [(t, value)]}`` as OpenMetrics text, one family after the other."""
    lines: list[str] = []
    families: dict[str, list[str]] = {}
    for key in series:
        families.setdefault(key.split("{", 1)[0], []).append(key)
    for family, keys in families.items():
        lines.append(f"# TYPE {family} gauge")
        for key in keys:
            lines += [f"{key} {value} {t}" for t, value in series[key]]
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def test_given_history_in_prometheus_when_read_by_usage_source_then_it_equals_the_same_history_in_memory(tmp_path):
    # Given six hours of per-minute allocation: team-a runs 4 CPUs, then stops; team-b starts
    # later with 8; the capacity grows from 16 to 24 CPUs. (A backfill has no staleness markers,
    # so idle minutes are written as explicit zeros, as a live scrape's stale series read.)
    step = 60
    now = (int(time.time()) // step) * step - 10 * step  # history safely in the past
    start = now - 6 * 3600
    grid = list(range(start, now + 1, step))
    team_a = [(t, 4.0 if t < start + 2 * 3600 else 0.0) for t in grid]
    team_b = [(t, 8.0 if t >= start + 4 * 3600 else 0.0) for t in grid]
    capacity = [(t, 16.0 if t < start + 3 * 3600 else 24.0) for t in grid]
    lq = (
        'fairportal_local_queue_admitted_usage{{namespace="{ns}",local_queue="main",'
        'cluster_queue="cq",resource="cpu",flavor="default"}}'
    )
    storage = tmp_path / "tsdb"
    storage.mkdir()
    backfill(
        openmetrics(
            {
                lq.format(ns="team-a"): team_a,
                lq.format(ns="team-b"): team_b,
                'fairportal_cluster_capacity{resource="cpu"}': capacity,
            }
        ),
        storage,
    )
    policy = FairSharingPolicy.from_mapping(
        {
            "usageHalfLifeTime": "2h",
            "usageSamplingInterval": "1m",
            "usageWindow": {"size": "5h", "type": "sliding"},
        }
    )

    with prometheus(tmp_path, storage=storage) as url:
        usage = PrometheusUsageSource(PrometheusClient(url), policy).historical_usage(now)

    # Then it equals the decayed, windowed integral of the very same series held in memory
    def expected(samples: list[tuple[int, float]]) -> float:
        return windowed_usage(samples, now, 5 * 3600, "sliding", 7200) / windowed_usage(
            capacity, now, 5 * 3600, "sliding", 7200
        )

    assert usage["localQueue:team-a/main"]["cpu"] == pytest.approx(expected(team_a), rel=1e-12)
    assert usage["localQueue:team-b/main"]["cpu"] == pytest.approx(expected(team_b), rel=1e-12)
    assert usage["localQueue:team-b/main"]["cpu"] > usage["localQueue:team-a/main"]["cpu"] > 0


def test_given_kai_example_in_prometheus_then_24_gpu_hours_of_100_give_usage_0_24(tmp_path):
    # KAI's worked example: 10 GPUs for 10 hours, a queue used 8 GPUs for 3 hours, no decay.
    step = 300
    now = (int(time.time()) // step) * step - 2 * step
    start = now - 10 * 3600
    grid = list(range(start, now + 1, step))
    used = [(t, 8.0 if start + 3600 <= t < start + 4 * 3600 else 0.0) for t in grid]
    storage = tmp_path / "tsdb"
    storage.mkdir()
    backfill(
        openmetrics(
            {
                'fairportal_local_queue_admitted_usage{namespace="ml",local_queue="q",resource="nvidia.com/gpu"}': used,
                'fairportal_cluster_capacity{resource="nvidia.com/gpu"}': [(t, 10.0) for t in grid],
            }
        ),
        storage,
    )
    policy = FairSharingPolicy.from_mapping({"usageSamplingInterval": "5m", "usageWindow": {"size": "10h"}})

    with prometheus(tmp_path, storage=storage) as url:
        source = PrometheusUsageSource(PrometheusClient(url), policy, half_life_seconds=0)
        usage = source.historical_usage(now)
        with pytest.raises(PrometheusError, match="bad_data"):
            PrometheusClient(url).query("sum(")

    assert usage == {"localQueue:ml/q": {"nvidia.com/gpu": pytest.approx(0.24, rel=1e-12)}}


def test_given_nothing_listening_when_queried_then_a_clear_error():
    client = PrometheusClient(f"http://127.0.0.1:{free_port()}", timeout=2)

    with pytest.raises(PrometheusError, match="cannot query Prometheus"):
        client.query("up")
