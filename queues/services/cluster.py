"""The clusters that run admitted workloads, each through its own backend (``Cluster`` rows).

Services talk to ``queues.backends.backend_for(cluster)`` only: ``sync_cluster`` observes each
enabled cluster (each with its own back-off while it does not answer), ``dispatch_decisions``
tells each cluster what a committed admission pass decided for the workloads on it,
``record_starts`` moves admission intervals to the cluster's own start times.
``complete_due_workloads`` is the simulated cluster's clock: an admitted workload finishes when
its declared duration is over (or fails when its maximum runtime is shorter), at that exact
moment even when the task runs late, so no time is lost.

Health is per cluster (``BackendHealth``, one row each): an unreachable cluster holds only the
admissions to its own flavors (``unavailable_flavors``, read by the admission pass) and its own
syncs; the others go on.

Wall time needs no task here: while a workload runs it is derived on read from
``admitted_at`` (``Workload.current_wall_time_seconds``), and fixed when it ends.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from queues import backends
from queues.backends import BackendUnavailable, SyncReport
from queues.models import AdmissionRecord, BackendHealth, Cluster, ResourceFlavor, Workload, WorkloadState, health_of
from queues.models import default_cluster as _default_cluster
from queues.services import transitions

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BackendStatus:
    """What the overview page, ``/readyz`` and ``/metrics`` show about one cluster."""

    backend: str
    reachable: bool
    unreachable_since: datetime | None = None
    retry_at: datetime | None = None
    last_error: str = ""
    failures: int = 0
    cluster: str = ""
    enabled: bool = True


def _status(cluster: Cluster, row: BackendHealth | None) -> BackendStatus:
    if row is None:
        return BackendStatus(
            backend=cluster.effective_backend, reachable=True, cluster=cluster.name, enabled=cluster.enabled
        )
    return BackendStatus(
        backend=cluster.effective_backend,
        reachable=row.reachable,
        unreachable_since=row.unreachable_since,
        retry_at=row.retry_at,
        last_error=row.last_error,
        failures=row.failures,
        cluster=cluster.name,
        enabled=cluster.enabled,
    )


def backend_status() -> BackendStatus:
    """The default cluster's status (the single-cluster view)."""
    found = _default_cluster()
    return _status(found, BackendHealth.objects.filter(cluster=found).first())


def cluster_statuses() -> list[BackendStatus]:
    """Every cluster's status, in name order (one query)."""
    return [_status(found, health_of(found)) for found in Cluster.objects.select_related("health")]


def backend_reachable() -> bool:
    """False while any enabled cluster is unreachable (from a failed call until a sync gets through)."""
    return not BackendHealth.objects.filter(reachable=False, cluster__enabled=True).exists()


def unavailable_flavors() -> frozenset[str]:
    """Flavors nothing may be admitted to now: their cluster is unreachable or disabled (one query).

    Deciding what a cluster that does not answer should run would only pile up repairs, so its
    flavors wait; other clusters' flavors are decided as usual.
    """
    return frozenset(
        ResourceFlavor.objects.filter(Q(cluster__enabled=False) | Q(cluster__health__reachable=False)).values_list(
            "name", flat=True
        )
    )


def backing_off(now: datetime | None = None, cluster: Cluster | None = None) -> bool:
    """True while ``cluster`` (None: the default) is unreachable and its next retry is not due yet."""
    moment = now or timezone.now()
    target = cluster if cluster is not None else _default_cluster()
    return BackendHealth.objects.filter(cluster=target, reachable=False, retry_at__gt=moment).exists()


def _record_failure(error: BackendUnavailable, now: datetime, cluster: Cluster) -> None:
    """Count a failed call; the next try waits CLUSTER_BACKOFF, doubling up to CLUSTER_BACKOFF_MAX."""
    with transaction.atomic():
        row, _ = BackendHealth.objects.select_for_update().get_or_create(
            cluster=cluster, defaults={"backend": cluster.effective_backend}
        )
        delay = min(settings.CLUSTER_BACKOFF_MAX_SECONDS, settings.CLUSTER_BACKOFF_SECONDS * 2 ** min(row.failures, 20))
        if row.reachable:
            row.unreachable_since = now
        row.backend = cluster.effective_backend
        row.reachable = False
        row.failures += 1
        row.retry_at = now + timedelta(seconds=delay)
        row.last_error = str(error)[:300]
        row.save()
    logger.warning(
        "cluster %s (backend %s) unreachable (%d in a row), retry in %ss: %s",
        cluster.name,
        row.backend,
        row.failures,
        delay,
        row.last_error,
    )


def _record_success(now: datetime, cluster: Cluster) -> None:
    """Mark the cluster reachable; a healthy row is rewritten at most once a minute."""
    rows = BackendHealth.objects.filter(cluster=cluster)
    stale = Q(reachable=False) | Q(last_ok_at__isnull=True) | Q(last_ok_at__lt=now - timedelta(minutes=1))
    if (
        not rows.filter(stale).update(
            reachable=True,
            failures=0,
            retry_at=None,
            unreachable_since=None,
            last_ok_at=now,
            backend=cluster.effective_backend,
        )
        and not rows.exists()
    ):
        BackendHealth.objects.get_or_create(
            cluster=cluster, defaults={"last_ok_at": now, "backend": cluster.effective_backend}
        )


def sync_cluster(*, now: datetime | None = None, cluster: Cluster | None = None) -> SyncReport:
    """Observe ``cluster`` (None: every enabled cluster, in name order) once: imports, starts,
    ends, repairs. Each cluster backs off on its own while it is down; the report is their sum
    (``backed_off`` when any of them did)."""
    moment = now or timezone.now()
    targets = [cluster] if cluster is not None else list(Cluster.objects.filter(enabled=True))
    if cluster is None and not targets and not Cluster.objects.exists():
        targets = [_default_cluster()]  # a flushed database (tests): the default comes back on first use
    total = SyncReport()
    for target in targets:
        report = _sync_one(target, moment)
        for name in ("imported", "started", "finished", "failed", "cancelled", "restarted", "stopped", "rejected"):
            getattr(total, name).extend(getattr(report, name))
        total.backed_off = total.backed_off or report.backed_off
    return total


def _sync_one(cluster: Cluster, moment: datetime) -> SyncReport:
    if backing_off(moment, cluster):
        return SyncReport(backed_off=True)
    try:
        report = backends.backend_for(cluster).sync(moment)
    except BackendUnavailable as error:
        _record_failure(error, moment, cluster)
        return SyncReport(backed_off=True)
    _record_success(moment, cluster)
    return report


def dispatch_decisions(
    admitted: Sequence[int], evicted: Sequence[int], *, clusters: Mapping[int, Cluster] | None = None
) -> None:
    """Tell each cluster what a committed pass decided for its workloads: stop the evicted,
    start the admitted, one batch per cluster. ``clusters``: each workload's cluster, as the
    pass knew it (no query); one query finds those it leaves out.

    Called after the commit, never inside the pass's transaction: a crash or an unreachable
    cluster here leaves the database ahead of that cluster, and its next sync catches it up.
    An evicted workload keeps the cluster it ran on, so it is stopped there.
    """
    if not admitted and not evicted:
        return
    where: dict[int, Cluster | None] = dict(clusters or {})
    unknown = [workload_id for workload_id in (*admitted, *evicted) if workload_id not in where]
    if unknown:
        where.update(
            (workload.pk, workload.cluster)
            for workload in Workload.objects.filter(pk__any_of=unknown).select_related("cluster").only("id", "cluster")
        )
    default: Cluster | None = None
    targets: dict[int, Cluster] = {}
    starts: dict[int, list[int]] = {}
    stops: dict[int, list[int]] = {}
    for ids, into in ((evicted, stops), (admitted, starts)):
        for workload_id in ids:
            target = where.get(workload_id)
            if target is None:
                default = default or _default_cluster()
                target = default
            targets[target.pk] = target
            into.setdefault(target.pk, []).append(workload_id)
    for key in sorted(targets):
        target = targets[key]
        if not target.enabled:
            continue  # a disabled cluster is not called; admission to it is held anyway
        try:
            backend = backends.backend_for(target)
            if stops.get(key):
                backend.stop(stops[key])
            if starts.get(key):
                backend.start(starts[key])
        except BackendUnavailable as error:
            _record_failure(error, timezone.now(), target)


def record_starts(starts: Mapping[int, datetime]) -> list[int]:
    """The cluster started these admitted workloads at these times (Slurm's start time).

    The open admission interval (and ``admitted_at``) moves to the cluster's start, so wall time
    and budgets count what ran (budgets charge an open interval only once ``started_at`` is set,
    ``budgets.accounting``). An interval a budget already charged keeps its start (the charged
    stretch is not rewritten); only ``started_at`` is set then.
    """
    done = []
    for workload_id, at in starts.items():
        with transaction.atomic():
            admitted_at = (
                Workload.objects.filter(pk=workload_id, state=WorkloadState.ADMITTED, started_at__isnull=True)
                .values_list("admitted_at", flat=True)
                .first()
            )
            if admitted_at is None:
                continue
            moved = AdmissionRecord.objects.filter(
                workload_id=workload_id, ended_at__isnull=True, budget_charges__isnull=True
            ).update(admitted_at=at)
            fields = {"started_at": at, **({"admitted_at": at} if moved else {})}
            if Workload.objects.filter(pk=workload_id, state=WorkloadState.ADMITTED, admitted_at=admitted_at).update(
                **fields
            ):
                done.append(workload_id)
    return done


def due_end(admitted_at: datetime, duration: int | None, max_runtime: int | None) -> tuple[datetime, str] | None:
    """When and how a simulated workload ends (None when it declares no duration)."""
    if duration is None and max_runtime is None:
        return None
    if max_runtime is not None and (duration is None or max_runtime < duration):
        return admitted_at + timedelta(seconds=max_runtime), WorkloadState.FAILED
    return admitted_at + timedelta(seconds=duration or 0), WorkloadState.FINISHED


# The run time a simulated workload ends after: the shorter of its duration and its maximum
# runtime (PostgreSQL's LEAST skips NULLs; SQLite's min() does not, hence the COALESCEs).
_RUN_TIME = {
    "postgresql": "LEAST(duration_seconds, max_runtime_seconds)",
    "sqlite": "min(COALESCE(duration_seconds, max_runtime_seconds), COALESCE(max_runtime_seconds, duration_seconds))",
}
_DUE = {
    "postgresql": "admitted_at + {run} * interval '1 second' <= %s",
    "sqlite": "julianday(admitted_at) + {run} / 86400.0 <= julianday(%s)",
}


def due_workloads(
    moment: datetime, cluster: Cluster | None = None
) -> list[tuple[int, datetime, int | None, int | None]]:
    """Admitted workloads whose run is over at ``moment`` (on ``cluster_id``, and, when that is
    the default cluster, those admitted without one recorded; None: on every cluster):
    one query, filtered in SQL."""
    vendor = connection.vendor
    condition = _DUE[vendor].format(run=_RUN_TIME[vendor])
    moment_param = moment if vendor == "postgresql" else connection.ops.adapt_datetimefield_value(moment)
    on_cluster, cluster_params = "", []
    if cluster is not None:
        on_cluster = " AND (cluster_id = %s OR (cluster_id IS NULL AND %s))"
        cluster_params = [cluster.pk, cluster.from_settings]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, admitted_at, duration_seconds, max_runtime_seconds FROM queues_workload "
            f"WHERE state = %s AND admitted_at IS NOT NULL "
            f"AND (duration_seconds IS NOT NULL OR max_runtime_seconds IS NOT NULL) AND {condition}{on_cluster} "
            "ORDER BY id",
            [WorkloadState.ADMITTED, moment_param, *cluster_params],
        )
        rows = cursor.fetchall()
    return [(pk, _aware(admitted_at), duration, max_runtime) for pk, admitted_at, duration, max_runtime in rows]


def _aware(value: datetime | str) -> datetime:
    """A timestamp read through a raw cursor (SQLite gives naive UTC, or text)."""
    moment = parse_datetime(value) if isinstance(value, str) else value
    assert moment is not None
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)


def complete_due_workloads(*, now: datetime | None = None, cluster: Cluster | None = None) -> list[int]:
    """Finish every simulated workload (on ``cluster``; None: on any) whose run is over, at its
    exact end; returns their ids.

    A thin "what is due" query feeding ``transitions.finish_many``: a fixed number of
    statements for any number of workloads, in one transaction.
    """
    moment = now or timezone.now()
    finishes = []
    for workload_id, admitted_at, duration, max_runtime in due_workloads(moment, cluster):
        end = due_end(admitted_at, duration, max_runtime)
        if end is None or end[0] > moment:
            continue
        at, outcome = end
        message = "" if outcome == WorkloadState.FINISHED else f"exceeded its maximum runtime of {max_runtime}s"
        finishes.append(transitions.Finish(workload_id, at, outcome, message, admitted_at=admitted_at))
    with transaction.atomic():
        return transitions.finish_many(finishes)


def total_wall_time_seconds(workload_id: int, *, now: datetime | None = None) -> int:
    """Wall time over every admission of a workload, from its admission intervals."""
    moment = now or timezone.now()
    return sum(record.seconds(moment) for record in AdmissionRecord.objects.filter(workload_id=workload_id))
