"""Workload state changes, each a conditional UPDATE that claims the state it expects.

A change only happens if the row is still in the expected state (checked through the row
count), so two workers racing on the same workload cannot both act. Admission intervals are
kept in AdmissionRecord rows: wall time comes from timestamps, never from a running counter.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import F

from queues.models import AdmissionRecord, Workload, WorkloadResource, WorkloadState
from queues.models.workload import total_requests


def _seconds_between(start: datetime | None, end: datetime) -> int:
    if start is None:
        return 0
    return max(0, int((end - start).total_seconds()))


def admit(
    *,
    workload_id: int,
    cluster_queue_id: int,
    assignment: dict[str, str],
    flavor_ids: dict[str, int],
    now: datetime,
    started: bool,
) -> bool:
    """Pending -> Admitted, opening an admission interval. False when it was no longer pending."""
    claimed = Workload.objects.filter(pk=workload_id, state=WorkloadState.PENDING).update(
        state=WorkloadState.ADMITTED,
        admitted_at=now,
        started_at=now if started else None,
        cluster_queue_id=cluster_queue_id,
        flavor_assignment=assignment,
        wall_time_seconds=0,
        pending_reason_code="",
        pending_reason_message="",
        queue_position=None,
    )
    if not claimed:
        return False
    row: dict[str, Any] = Workload.objects.filter(pk=workload_id).values(
        "namespace_id", "local_queue_id", "pod_sets"
    ).get()
    AdmissionRecord.objects.create(
        workload_id=workload_id,
        namespace_id=row["namespace_id"],
        local_queue_id=row["local_queue_id"],
        cluster_queue_id=cluster_queue_id,
        assignment=assignment,
        requests=total_requests(row["pod_sets"]),
        admitted_at=now,
    )
    for resource, flavor in assignment.items():
        WorkloadResource.objects.filter(workload_id=workload_id, resource=resource).update(flavor_id=flavor_ids.get(flavor))
    return True


def evict(*, workload_id: int, now: datetime, message: str, code: str = "") -> bool:
    """Admitted -> Pending (Kueue's eviction): the interval closes, its time moves to the past.

    With ``code`` the eviction's reason is also the workload's pending reason until the next
    pass explains its wait (a drained workload says BudgetExhausted at once, not 5 s later).
    """
    admitted_at = Workload.objects.filter(pk=workload_id, state=WorkloadState.ADMITTED).values_list(
        "admitted_at", flat=True
    ).first()
    if admitted_at is None:
        return False
    elapsed = _seconds_between(admitted_at, now)
    claimed = Workload.objects.filter(pk=workload_id, state=WorkloadState.ADMITTED, admitted_at=admitted_at).update(
        state=WorkloadState.PENDING,
        admitted_at=None,
        started_at=None,
        cluster_queue=None,
        flavor_assignment={},
        wall_time_seconds=0,
        accumulated_past_execution_seconds=F("accumulated_past_execution_seconds") + elapsed,
        eviction_count=F("eviction_count") + 1,
        last_evicted_at=now,
        last_eviction_reason=message[:300],
        pending_reason_code=code[:40],
        pending_reason_message=message if code else "",
        queue_position=None,
    )
    if not claimed:
        return False
    close_admission(workload_id=workload_id, ended_at=now, reason=AdmissionRecord.EndReason.EVICTED, message=message)
    WorkloadResource.objects.filter(workload_id=workload_id).update(flavor=None)
    return True


def finish(*, workload_id: int, at: datetime, outcome: str = WorkloadState.FINISHED, message: str = "") -> bool:
    """Admitted -> Finished/Failed at ``at`` (which may lie in the past: no time is lost)."""
    admitted_at = Workload.objects.filter(pk=workload_id, state=WorkloadState.ADMITTED).values_list(
        "admitted_at", flat=True
    ).first()
    if admitted_at is None:
        return False
    at = max(at, admitted_at)
    claimed = Workload.objects.filter(pk=workload_id, state=WorkloadState.ADMITTED, admitted_at=admitted_at).update(
        state=outcome, finished_at=at, wall_time_seconds=_seconds_between(admitted_at, at)
    )
    if not claimed:
        return False
    reason = AdmissionRecord.EndReason.FINISHED if outcome == WorkloadState.FINISHED else AdmissionRecord.EndReason.FAILED
    close_admission(workload_id=workload_id, ended_at=at, reason=reason, message=message)
    return True


def close_admission(*, workload_id: int, ended_at: datetime, reason: str, message: str = "") -> None:
    """End the open admission interval of a workload (no-op when none is open)."""
    AdmissionRecord.objects.filter(workload_id=workload_id, ended_at__isnull=True).update(
        ended_at=ended_at, end_reason=reason, end_message=message[:300]
    )
