"""Prometheus metrics: the instruments the control loop observes, and the ``/metrics`` view.

Two kinds of metrics:

* State read from the database at scrape time (``queues.interop.collector.DatabaseCollector``):
  counts, usage, decayed usage, shares, quotas; other apps add theirs at ``METRICS_COLLECTORS`` (``core.extensions``)
  in their ``AppConfig.ready`` (budgets: its budgets).
* Events counted by the control loop (admission passes, admissions, evictions, admission waits):
  the objects are defined here, once; the admission pass calls ``observe_pass`` after each pass.
  They are observed in the control workers' processes (``fairportal.control_workers``), not in
  the web server's: every shipped layout (``make run``, the systemd units, compose) runs all of
  them with ``PROMETHEUS_MULTIPROC_DIR`` naming one shared directory, emptied once per start by
  what starts them all, and ``/metrics`` sums the files of every process (``queues.multiprocess``
  states the invariants). Without it, ``/metrics`` shows the web process's own values only:
  none of the control loop's.

``METRICS_TOKEN`` (settings), when set, makes ``/metrics`` require ``Authorization: Bearer``.
``METRICS_TENANT_LABELS=false`` leaves out every sample labelled with a tenant's names
(``TENANT_LABELS``: namespace, LocalQueue, budget and its target): what remains is per
ClusterQueue, cohort and flavor, already the sum over the tenants.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime

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
from queues import multiprocess
from queues.interop.collector import DatabaseCollector
from queues.models.workload import Workload

multiprocess.install()  # before any instrument below makes a value

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
# Kueue's names, labels and meaning (pkg/metrics), so Kueue's dashboards and alerts carry over.
# Kueue's bucket layout for waits: 1 s doubling to about 2.3 hours.
WAIT_BUCKETS = tuple(float(2**i) for i in range(14))
ADMISSION_WAIT_TIME = Histogram(
    "kueue_admission_wait_time_seconds",
    "Seconds from a workload's queue timestamp (submission, or its last eviction) to its admission, per ClusterQueue",
    ["cluster_queue"],
    buckets=WAIT_BUCKETS,
    registry=CONTROL_LOOP_REGISTRY,
)
ADMITTED_WORKLOADS = Counter(
    "kueue_admitted_workloads",
    "Workloads admitted, per ClusterQueue",
    ["cluster_queue"],
    registry=CONTROL_LOOP_REGISTRY,
)
EVICTED_WORKLOADS = Counter(
    "kueue_evicted_workloads",
    "Workloads evicted, per ClusterQueue and reason (Preempted, ...)",
    ["cluster_queue", "reason"],
    registry=CONTROL_LOOP_REGISTRY,
)
ADMISSION_ATTEMPTS = Counter(
    "kueue_admission_attempts",
    "Admission passes that had work to admit; result: success (admitted at least one workload) or "
    "inadmissible (admitted none)",
    ["result"],
    registry=CONTROL_LOOP_REGISTRY,
)
ADMISSION_ATTEMPT_DURATION = Histogram(
    "kueue_admission_attempt_duration_seconds",
    "Wall time of one admission pass, per result (success: admitted at least one workload; inadmissible: none)",
    ["result"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
    registry=CONTROL_LOOP_REGISTRY,
)


def observe_pass(
    *,
    unit: str,
    seconds: float,
    now: datetime,
    admitted: Sequence[tuple[str, str, int]],
    evicted: Sequence[tuple[str, str]],
    pending: int = 0,
) -> None:
    """One admission pass's instruments: its duration (per unit, and per Kueue result); per
    admitted workload ``(cluster_queue, admission_mode, workload id)`` the admission counters
    and its wait; per eviction ``(cluster_queue, reason)`` the eviction counters. A pass with
    nothing to admit (none admitted, none left ``pending``) is no admission attempt for Kueue's two.

    The wait runs from the workload's queue timestamp, or its last eviction when later (Kueue:
    "created or requeued"), to ``now``, the pass's clock: one query, only when the pass admitted.
    """
    ADMISSION_PASS_DURATION.labels(scope=unit).observe(seconds)
    waiting_since = {}
    if admitted:
        rows = Workload.objects.filter(id__in=[workload_id for _, _, workload_id in admitted])
        for pk, queued_at, evicted_at in rows.values_list("id", "queued_at", "last_evicted_at"):
            waiting_since[pk] = max(queued_at, evicted_at) if evicted_at is not None else queued_at
    for cluster_queue, mode, workload_id in admitted:
        ADMISSIONS.labels(cluster_queue=cluster_queue, admission_mode=mode).inc()
        ADMITTED_WORKLOADS.labels(cluster_queue=cluster_queue).inc()
        since = waiting_since.get(workload_id)
        if since is not None:
            wait = max(0.0, (now - since).total_seconds())
            ADMISSION_WAIT_TIME.labels(cluster_queue=cluster_queue).observe(wait)
    for cluster_queue, reason in evicted:
        EVICTIONS.labels(cluster_queue=cluster_queue, reason=reason).inc()
        EVICTED_WORKLOADS.labels(cluster_queue=cluster_queue, reason=reason).inc()
    if not admitted and not pending:
        return
    result = "success" if admitted else "inadmissible"
    ADMISSION_ATTEMPTS.labels(result=result).inc()
    ADMISSION_ATTEMPT_DURATION.labels(result=result).observe(seconds)


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
    """The whole ``/metrics`` body: database state, then the control loop's counters (in
    multiprocess mode the sum of every process's files; a process's counts stay after it exits)."""
    state = CollectorRegistry(auto_describe=False)
    collectors: list[Collector] = [
        DatabaseCollector(),
        *(factory() for _, factory in extensions.items(METRICS_COLLECTORS)),
    ]
    for collector in collectors:
        state.register(collector if settings.METRICS_TENANT_LABELS else WithoutTenantLabels(collector))
    if multiprocess.directory():
        events = CollectorRegistry()
        MultiProcessCollector(events, path=multiprocess.directory())
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
