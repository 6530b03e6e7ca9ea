"""The cluster that runs admitted workloads: built-in simulation or external executors.

Wall time needs no task here: while a workload runs it is derived on read from
``admitted_at`` (``Workload.current_wall_time_seconds``), and fixed when it ends.

``simulated``: an admitted workload finishes when its declared duration is over (or fails
when its maximum runtime is shorter), at that exact moment even when this task runs late, so
no time is lost. ``external``: nothing finishes by itself; executors report through the API.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from queues.models import AdmissionRecord, Workload, WorkloadState
from queues.services import transitions


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


def due_workloads(moment: datetime) -> list[tuple[int, datetime, int | None, int | None]]:
    """Admitted workloads whose run is over at ``moment``: one query, filtered in SQL."""
    vendor = connection.vendor
    condition = _DUE[vendor].format(run=_RUN_TIME[vendor])
    moment_param = moment if vendor == "postgresql" else connection.ops.adapt_datetimefield_value(moment)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, admitted_at, duration_seconds, max_runtime_seconds FROM queues_workload "
            f"WHERE state = %s AND admitted_at IS NOT NULL "
            f"AND (duration_seconds IS NOT NULL OR max_runtime_seconds IS NOT NULL) AND {condition} ORDER BY id",
            [WorkloadState.ADMITTED, moment_param],
        )
        rows = cursor.fetchall()
    return [(pk, _aware(admitted_at), duration, max_runtime) for pk, admitted_at, duration, max_runtime in rows]


def _aware(value: datetime | str) -> datetime:
    """A timestamp read through a raw cursor (SQLite gives naive UTC, or text)."""
    moment = parse_datetime(value) if isinstance(value, str) else value
    assert moment is not None
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=dt_timezone.utc)


def complete_due_workloads(*, now: datetime | None = None) -> list[int]:
    """Finish every simulated workload whose run is over, at its exact end; returns their ids.

    A thin "what is due" query feeding ``transitions.finish_many``: a fixed number of
    statements for any number of workloads, in one transaction.
    """
    if settings.CLUSTER_BACKEND != "simulated":
        return []
    moment = now or timezone.now()
    finishes = []
    for workload_id, admitted_at, duration, max_runtime in due_workloads(moment):
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
