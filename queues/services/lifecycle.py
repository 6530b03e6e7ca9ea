"""Workload lifecycle reports from external executors and tenants: start, finish, fail, cancel.

Each report claims the state it expects with a conditional UPDATE and checks the row count, so
two reports racing for the same workload (an executor retrying ``finish``, a tenant cancelling
while the executor reports, the admission pass admitting what is being cancelled) cannot both
win: the loser gets ``InvalidTransition`` with the state the winner left. ``now`` is captured
once per report.

Finishing and failing go through ``transitions.finish``, the control loop's own path, which
fixes ``wall_time_seconds`` from ``admitted_at`` to the end and closes the admission interval
(``AdmissionRecord``) that wall time and budgets are derived from (docs/design.md "Time budgets").
A cancelled admitted workload is charged the same way; a cancelled pending one never ran (its
LocalQueue's pending count drops in the same transaction, ``usage_counters.move``).
When an admitted workload ends, its ClusterQueue gets an admission pass once the change commits:
the freed capacity goes to the next workload without waiting for the beat schedule.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from queues.models import Workload, WorkloadState
from queues.services import transitions, usage_counters
from queues.services.errors import InvalidTransition
from queues.services.pass_requests import request_admission_pass

_START = "only an admitted workload that has not reported start yet can start"
_END = "only an admitted workload can {action}"
_CANCEL = "only a pending or admitted workload can be cancelled"


def start_workload(workload_id: int, *, now: datetime | None = None) -> Workload:
    """The executor began running an admitted workload: record ``started_at``."""
    now = now or timezone.now()
    claimed = Workload.objects.filter(pk=workload_id, state=WorkloadState.ADMITTED, started_at__isnull=True).update(
        started_at=now
    )
    if claimed != 1:
        raise _refusal(workload_id, "start", _START)
    return Workload.objects.get(pk=workload_id)


def finish_workload(workload_id: int, *, now: datetime | None = None, message: str = "") -> Workload:
    """The admitted workload completed successfully."""
    return _end_admission(workload_id, "finish", WorkloadState.FINISHED, now, message)


def fail_workload(workload_id: int, *, now: datetime | None = None, message: str = "") -> Workload:
    """The admitted workload ended in an error; its wall time still counts against budgets."""
    return _end_admission(workload_id, "fail", WorkloadState.FAILED, now, message)


def cancel_workload(workload_id: int, *, now: datetime | None = None, message: str = "") -> Workload:
    """Withdraw a pending workload, or stop an admitted one (its wall time so far counts)."""
    now = now or timezone.now()
    seen = (
        Workload.objects.filter(pk=workload_id)
        .values("state", "admitted_at", "cluster_queue_id", "local_queue_id")
        .first()
    )
    if seen is None:
        raise Workload.DoesNotExist(f"workload {workload_id} does not exist")
    if seen["state"] == WorkloadState.PENDING:
        with transaction.atomic():
            claimed = Workload.objects.filter(pk=workload_id, state=WorkloadState.PENDING).update(
                state=WorkloadState.CANCELLED,
                finished_at=now,
            )  # its stored reason is no longer read (only a pending workload's is)
            usage_counters.move([(seen["local_queue_id"], 0, -claimed)])  # its LocalQueue's pending count
    elif seen["state"] == WorkloadState.ADMITTED:
        claimed = _cancel_admitted(workload_id, seen["admitted_at"], now, message)  # type: ignore[arg-type]  # admitted rows have it
    else:
        claimed = 0
    if claimed != 1:
        raise _refusal(workload_id, "cancel", _CANCEL)
    if seen["state"] == WorkloadState.ADMITTED:
        _capacity_freed(seen["cluster_queue_id"])
    return Workload.objects.get(pk=workload_id)


def _cancel_admitted(workload_id: int, admitted_at: datetime, now: datetime, message: str) -> int:
    """Admitted -> Cancelled through ``transitions.finish_many``: the same claim, interval and
    admitted-usage counter bookkeeping as finishing."""
    with transaction.atomic():
        ended = transitions.finish_many(
            [transitions.Finish(workload_id, now, WorkloadState.CANCELLED, message, admitted_at=admitted_at)]
        )
    return len(ended)


def _end_admission(workload_id: int, action: str, outcome: str, now: datetime | None, message: str) -> Workload:
    now = now or timezone.now()
    with transaction.atomic():
        ended = transitions.finish(workload_id=workload_id, at=now, outcome=outcome, message=message)
    if not ended:
        raise _refusal(workload_id, action, _END.format(action=action))
    workload = Workload.objects.get(pk=workload_id)
    _capacity_freed(workload.cluster_queue_id)
    return workload


def _capacity_freed(cluster_queue_id: int | None) -> None:
    if cluster_queue_id is None:
        return
    request_admission_pass(cluster_queue_id)


def _refusal(workload_id: int, action: str, reason: str) -> InvalidTransition:
    """The error to raise, naming the state the workload is in now."""
    current = Workload.objects.select_related("namespace").filter(pk=workload_id).first()
    if current is None:
        raise Workload.DoesNotExist(f"workload {workload_id} does not exist")
    return InvalidTransition(workload=str(current), action=action, state=current.state, reason=reason)
