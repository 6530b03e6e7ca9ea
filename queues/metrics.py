"""Prometheus metrics: the instruments the control loop observes, and the ``/metrics`` view.

Two kinds of metrics:

* State read from the database at scrape time (``queues.interop.collector.DatabaseCollector``):
  counts, usage, decayed usage, shares, quotas; other apps add theirs at ``METRICS_COLLECTORS`` (``core.extensions``)
  in their ``AppConfig.ready`` (budgets: its budgets).
* Events counted by the control loop (admission passes, admissions, evictions): the objects are
  defined here, once, so the control-loop issue only has to call ``.observe()`` / ``.inc()``.
  They live in the Celery worker's process, so run the web server and the workers with
  ``PROMETHEUS_MULTIPROC_DIR`` set to one shared, emptied-at-start directory; ``/metrics``
  then aggregates every process. Without it, ``/metrics`` shows this process's values only.

``METRICS_TOKEN`` (settings), when set, makes ``/metrics`` require ``Authorization: Bearer``.
``METRICS_TENANT_LABELS=false`` leaves out every sample labelled with a tenant's names
(``TENANT_LABELS``: namespace, LocalQueue, budget and its target): what remains is per
ClusterQueue, cohort and flavor, already the sum over the tenants.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Callable, Iterator

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from core import extensions
from core.extensions import ExtensionPoint
from queues.interop.collector import DatabaseCollector

CONTROL_LOOP_REGISTRY = CollectorRegistry(auto_describe=True)

ADMISSION_PASS_DURATION = Histogram(
    "fairportal_admission_pass_duration_seconds",
    "Wall time of one admission pass over one admission scope",
    ["scope"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
    registry=CONTROL_LOOP_REGISTRY,
)
ADMISSIONS = Counter(
    "fairportal_admissions",
    "Workloads admitted, per ClusterQueue and admission mode",
    ["cluster_queue", "admission_mode"],
    registry=CONTROL_LOOP_REGISTRY,
)
EVICTIONS = Counter(
    "fairportal_evictions",
    "Workloads evicted (preempted, reclaimed, drained), per ClusterQueue and reason",
    ["cluster_queue", "reason"],
    registry=CONTROL_LOOP_REGISTRY,
)

# Collectors of database state that other apps add to the scrape, read at each scrape after the
# queues' own: ``core.extensions.register(METRICS_COLLECTORS, name, factory)``, idempotent by name.
METRICS_COLLECTORS: ExtensionPoint[Callable[[], Collector]] = ExtensionPoint("metrics collectors")


TENANT_LABELS = frozenset({"namespace", "local_queue", "budget", "target"})


class WithoutTenantLabels(Collector):
    """Another collector's families without the samples that name a tenant (``TENANT_LABELS``);
    a family left with no sample is left out."""

    def __init__(self, inner: Collector) -> None:
        self.inner = inner

    def collect(self) -> Iterator[Metric]:
        for family in self.inner.collect():
            kept = [sample for sample in family.samples if not TENANT_LABELS.intersection(sample.labels)]
            if kept:
                family.samples = kept
                yield family


def exposition() -> bytes:
    """The whole ``/metrics`` body: database state, then the control loop's counters."""
    state = CollectorRegistry(auto_describe=False)
    collectors: list[Collector] = [
        DatabaseCollector(),
        *(factory() for _, factory in extensions.items(METRICS_COLLECTORS)),
    ]
    for collector in collectors:
        state.register(collector if settings.METRICS_TENANT_LABELS else WithoutTenantLabels(collector))
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        events = CollectorRegistry()
        MultiProcessCollector(events)
    else:
        events = CONTROL_LOOP_REGISTRY
    return generate_latest(state) + generate_latest(events)


def _authorised(request: HttpRequest) -> bool:
    """The bearer token when METRICS_TOKEN is set; without one, open only on a loopback-bound
    server (every tenant's names and budgets are in the scrape)."""
    token = getattr(settings, "METRICS_TOKEN", "")
    if not token:
        return settings.BIND_IS_LOOPBACK
    header = request.headers.get("Authorization", "")
    return header.startswith("Bearer ") and hmac.compare_digest(header[len("Bearer ") :].encode(), token.encode())


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    if not _authorised(request):
        why = "" if settings.METRICS_TOKEN else "; set METRICS_TOKEN: without it /metrics is open only on loopback"
        response = HttpResponse(
            f"metrics: a bearer token is required (METRICS_TOKEN){why}\n", status=401, content_type="text/plain"
        )
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    # The classic text format (0.0.4): every Prometheus 2.x and 3.x server reads it.
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_PLAIN_0_0_4)
