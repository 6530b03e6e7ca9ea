"""Workload lifecycle reports from external executors and tenants: start, finish, fail, cancel.

Each report claims the state it expects with a conditional UPDATE and checks the row count, so
two reports racing for the same workload (an executor retrying ``finish``, a tenant cancelling
while the executor reports) cannot both win: the loser gets ``InvalidTransition`` with the state
the winner left. ``now`` is captured once per report.

Wall time (DESIGN.md "Time budgets"): when an admitted workload ends, ``wall_time_seconds`` of
the current admission is fixed from ``admitted_at`` to the end, so a report that arrives late, or
a crashed executor, loses no time. A pending workload that is cancelled never ran and keeps 0.
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from queues.models import Workload, WorkloadState
from queues.services.errors import InvalidTransition

_START = "only an admitted workload that has not reported start yet can start"
_END = "only an admitted workload can {action}"
_CANCEL = "only a pending or admitted workload can be cancelled"


def start_workload(workload_id: int, *, now: datetime | None = None) -> Workload:
    """The executor began running an admitted workload: record ``started_at``."""
    now = now or timezone.now()
    claimed = Workload.objects.filter(
        pk=workload_id, state=WorkloadState.ADMITTED, started_at__isnull=True
    ).update(started_at=now)
    if claimed != 1:
        raise _refusal(workload_id, "start", _START)
    return Workload.objects.get(pk=workload_id)


def finish_workload(workload_id: int, *, now: datetime | None = None) -> Workload:
    """The admitted workload completed successfully."""
    return _end(workload_id, "finish", WorkloadState.FINISHED, (WorkloadState.ADMITTED,), _END, now)


def fail_workload(workload_id: int, *, now: datetime | None = None) -> Workload:
    """The admitted workload ended in an error; its wall time still counts against budgets."""
    return _end(workload_id, "fail", WorkloadState.FAILED, (WorkloadState.ADMITTED,), _END, now)


def cancel_workload(workload_id: int, *, now: datetime | None = None) -> Workload:
    """Withdraw a pending workload, or stop an admitted one (its wall time so far counts)."""
    allowed = (WorkloadState.PENDING, WorkloadState.ADMITTED)
    return _end(workload_id, "cancel", WorkloadState.CANCELLED, allowed, _CANCEL, now)


def admission_seconds(admitted_at: datetime | None, end: datetime) -> int:
    """Whole seconds of the current admission; never negative (clock skew between hosts)."""
    if admitted_at is None:
        return 0
    return max(0, int((end - admitted_at).total_seconds()))


def _end(
    workload_id: int,
    action: str,
    target: str,
    allowed: tuple[str, ...],
    reason: str,
    now: datetime | None,
) -> Workload:
    now = now or timezone.now()
    seen = Workload.objects.filter(pk=workload_id).values("state", "admitted_at").first()
    if seen is None:
        raise Workload.DoesNotExist(f"workload {workload_id} does not exist")
    if seen["state"] not in allowed:
        raise _refusal(workload_id, action, reason.format(action=action))
    changes: dict[str, object] = {
        "state": target,
        "finished_at": now,
        "queue_position": None,
        "pending_reason_code": "",
        "pending_reason_message": "",
    }
    if seen["state"] == WorkloadState.ADMITTED:
        changes["wall_time_seconds"] = admission_seconds(seen["admitted_at"], now)
    # Claim exactly what was read: the same state and the same admission. If anything moved in
    # between (another report, an eviction and re-admission), nothing is written.
    claimed = Workload.objects.filter(
        pk=workload_id, state=seen["state"], admitted_at=seen["admitted_at"]
    ).update(**changes)
    if claimed != 1:
        raise _refusal(workload_id, action, reason.format(action=action))
    return Workload.objects.get(pk=workload_id)


def _refusal(workload_id: int, action: str, reason: str) -> InvalidTransition:
    """The error to raise, naming the state the workload is in now."""
    current = Workload.objects.select_related("namespace").filter(pk=workload_id).first()
    if current is None:
        raise Workload.DoesNotExist(f"workload {workload_id} does not exist")
    return InvalidTransition(workload=str(current), action=action, state=current.state, reason=reason)
