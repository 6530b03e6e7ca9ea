"""The what-if lane on ``/metrics``: a collector playground registers with queues' exposition
(``queues.metrics.METRICS_COLLECTORS``), so queues never imports playground.

One query per scrape (runs not finished, grouped by status), whatever the number of runs. No
sample names a tenant or a run: the lane's backlog is the operator's concern.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from django.db.models import Count, Min
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from playground.models import Run
from queues.interop.collector import PREFIX

UNFINISHED = (Run.Status.QUEUED, Run.Status.RUNNING)


class WhatIfLaneCollector(Collector):
    """``fairportal_whatif_runs{status}`` and the oldest waiting run, read at scrape time."""

    def describe(self) -> Iterable[Metric]:
        return []  # no database read when the collector is registered

    def collect(self) -> Iterator[Metric]:
        runs = GaugeMetricFamily(
            f"{PREFIX}_whatif_runs",
            "Playground and simulation runs not finished on the what-if lane; status: queued (no worker "
            "has taken it yet) or running",
            labels=["status"],
        )
        oldest = GaugeMetricFamily(
            f"{PREFIX}_whatif_oldest_run_created_timestamp_seconds",
            "When the oldest run still in a status was created, Unix seconds (absent when none is)",
            labels=["status"],
        )
        rows = {
            row["status"]: row
            for row in Run.objects.filter(status__in=UNFINISHED)
            .values("status")
            .annotate(n=Count("id"), first=Min("created_at"))
            .order_by()
        }
        for status in UNFINISHED:
            row = rows.get(status)
            runs.add_metric([status], row["n"] if row else 0)
            if row is not None:
                oldest.add_metric([status], row["first"].timestamp())
        yield from (runs, oldest)
