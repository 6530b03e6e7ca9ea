"""The usage source's pure parts: the sample grid over sliding and tumbling windows, and gaps
(a series Prometheus has no sample for, as after a stale scrape) counting as zero."""

from __future__ import annotations

from fairshare.policy import FairSharingPolicy
from fairshare.usage.usage import window_start
from queues.interop.prometheus import PrometheusClient, Series
from queues.interop.usage_source import PrometheusUsageSource, on_grid


def source(window: dict) -> PrometheusUsageSource:
    policy = FairSharingPolicy.from_mapping({"usageSamplingInterval": "1m", "usageWindow": window})
    return PrometheusUsageSource(PrometheusClient("http://127.0.0.1:9"), policy)


def test_given_sliding_window_then_grid_starts_at_the_sample_covering_the_window_start():
    start, grid = source({"size": "10m", "type": "sliding"}).grid(now=1030)

    assert start == 430
    assert grid[0] == 420 and grid[-1] == 1020 and len(grid) == 11


def test_given_tumbling_window_then_it_starts_at_the_current_bucket():
    assert window_start(now=7300, size_seconds=3600, window_type="tumbling") == 7200
    start, grid = source({"size": "1h", "type": "tumbling"}).grid(now=7300)
    assert start == 7200 and grid == [7200, 7260]


def test_given_missing_samples_then_they_count_as_zero_on_the_grid():
    series = Series({"resource": "cpu"}, [(60.0, 4.0), (180.0, 2.0)])

    assert on_grid(series, [0, 60, 120, 180]) == [(0, 0.0), (60, 4.0), (120, 0.0), (180, 2.0)]


def test_given_no_prometheus_url_then_the_built_in_series_stays_the_default():
    from queues.interop.usage_source import usage_source_from_settings

    policy = FairSharingPolicy()
    assert usage_source_from_settings(policy, "") is None
    source = usage_source_from_settings(policy, "http://127.0.0.1:9090")
    assert source is not None and source.client.base_url == "http://127.0.0.1:9090" and source.step == 300
