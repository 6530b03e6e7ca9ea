"""The cluster that runs admitted workloads: built-in simulation or external executors.

``simulated``: an admitted workload finishes when its declared duration is over (or fails
when its maximum runtime is shorter), at that exact moment even when this task runs late, so
no time is lost. ``external``: nothing finishes by itself; executors report through the API.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from queues.models import AdmissionRecord, Workload, WorkloadState
from queues.services import transitions


def due_end(admitted_at: datetime, duration: int | None, max_runtime: int | None) -> tuple[datetime, str] | None:
    """When and how a simulated workload ends (None when it declares no duration)."""
    if duration is None and max_runtime is None:
        return None
    if max_runtime is not None and (duration is None or max_runtime < duration):
        return admitted_at + timedelta(seconds=max_runtime), WorkloadState.FAILED
    return admitted_at + timedelta(seconds=duration or 0), WorkloadState.FINISHED


def complete_due_workloads(*, now: datetime | None = None) -> list[int]:
    """Finish every simulated workload whose run is over; returns their ids."""
    if settings.CLUSTER_BACKEND != "simulated":
        return []
    moment = now or timezone.now()
    done = []
    rows = Workload.objects.filter(state=WorkloadState.ADMITTED).values_list(
        "id", "admitted_at", "duration_seconds", "max_runtime_seconds"
    )
    for workload_id, admitted_at, duration, max_runtime in rows:
        end = due_end(admitted_at, duration, max_runtime)
        if end is None or end[0] > moment:
            continue
        at, outcome = end
        message = "" if outcome == WorkloadState.FINISHED else f"exceeded its maximum runtime of {max_runtime}s"
        with transaction.atomic():
            if transitions.finish(workload_id=workload_id, at=at, outcome=outcome, message=message):
                done.append(workload_id)
    return done


def account_wall_time(*, now: datetime | None = None) -> int:
    """Refresh the cached ``wall_time_seconds`` of running workloads from their timestamps.

    The value is derived (``now - admitted_at``), so a task that runs late or not at all never
    loses time: the next run, or any reader using AdmissionRecord, gets the exact figure.
    """
    moment = now or timezone.now()
    rows = list(Workload.objects.filter(state=WorkloadState.ADMITTED).only("id", "admitted_at", "wall_time_seconds"))
    changed = []
    for workload in rows:
        seconds = max(0, int((moment - workload.admitted_at).total_seconds())) if workload.admitted_at else 0
        if seconds != workload.wall_time_seconds:
            workload.wall_time_seconds = seconds
            changed.append(workload)
    Workload.objects.bulk_update(changed, ["wall_time_seconds"], batch_size=1000)
    return len(changed)


def total_wall_time_seconds(workload_id: int, *, now: datetime | None = None) -> int:
    """Wall time over every admission of a workload, from its admission intervals."""
    moment = now or timezone.now()
    return sum(record.seconds(moment) for record in AdmissionRecord.objects.filter(workload_id=workload_id))
