"""Enforcement: an exhausted budget puts a QueueHold on its target; otherwise it has none.

The hold is the only lever: the admission pass reads holds into the engine snapshot, so a held
target's pending workloads wait with reason ``BudgetExhausted`` and this hold's message, and a
``drain`` hold (``HoldAndDrain``) makes the pass evict what runs there. Reconciling is
level-triggered: each run compares "exhausted now?" with "hold exists?", so raising the
allocation or a new period lifts the hold by itself, and a lost run changes nothing. Placing,
changing and lifting a hold are audited and recorded as budget events.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum

from django.db.models import QuerySet

from budgets.alerts import record_event
from budgets.models import Budget, BudgetEvent
from budgets.status import BudgetStatus, format_hours
from core.audit import Audit, audited_delete, audited_save
from core.models import Surface
from fairshare.types import STOP_NONE
from fairshare.usage import budgets as rules
from queues.models import LocalQueue, QueueHold
from queues.services.pass_requests import request_admission_pass


class HoldChange(str, Enum):
    NONE = "none"
    PLACED = "placed"
    UPDATED = "updated"
    LIFTED = "lifted"


def hold_source(budget_id: int) -> str:
    return f"budget:{budget_id}"


def hold_message(budget: Budget, status: BudgetStatus) -> str:
    """The sentence tenants read as their pending reason; names the budget and used/allocated."""
    resets = f" (resets {status.period_end:%Y-%m-%d})" if status.period_end else ""
    return (
        f"budget {budget.name} exhausted: {format_hours(status.used_hours)} of "
        f"{format_hours(budget.allocated_hours)} {budget.unit_label} used this period{resets}"
    )[:300]


def current_hold(budget_id: int) -> QueueHold | None:
    return QueueHold.objects.filter(source=hold_source(budget_id)).first()


def reconcile_hold(
    budget: Budget, status: BudgetStatus, *, now: datetime, lift_reason: str = "", surface: str = Surface.SYSTEM
) -> HoldChange:
    """Make the hold match the status: exhausted -> held (drained for HoldAndDrain), else none."""
    hold = current_hold(budget.pk)
    policy = rules.stop_policy(status.measured and status.exhausted, budget.action)
    if policy == STOP_NONE:
        if hold is None:
            return HoldChange.NONE
        lift_hold(hold, note=f"budget {budget.name}: {lift_reason or 'no longer exhausted'}", surface=surface)
        record_event(
            budget,
            BudgetEvent.Kind.HOLD_LIFTED,
            status,
            f"hold on {budget.target_label} lifted ({lift_reason or 'no longer exhausted'}): "
            f"{format_hours(status.used_hours)} of {format_hours(budget.allocated_hours)} {budget.unit_label} used",
            now=now,
        )
        return HoldChange.LIFTED

    message = hold_message(budget, status)
    drain = rules.drains(policy)
    if hold is None:
        field, pk = budget.target_ref
        hold = QueueHold(
            **{f"{field}_id": pk}, code="BudgetExhausted", message=message, drain=drain, source=hold_source(budget.pk)
        )
        audited_save(hold, surface=surface, note=message)
        record_event(
            budget,
            BudgetEvent.Kind.HOLD_PLACED,
            status,
            f"{'hold and drain' if drain else 'hold'} placed on {budget.target_label}: {message}",
            now=now,
        )
        _request_passes(budget)
        return HoldChange.PLACED

    if hold.message == message and hold.drain == drain:
        return HoldChange.NONE
    audit = Audit.of(hold, stored=False)
    drain_changed = hold.drain != drain
    hold.message, hold.drain = message, drain
    hold.save(update_fields=["message", "drain"])
    if drain_changed:  # the message follows usage and is not policy; the drain flag is
        audit.record(surface=surface, note=f"budget {budget.name} action is now {budget.action}")
        _request_passes(budget)
    return HoldChange.UPDATED


def lift_hold(hold: QueueHold, *, note: str, surface: str = Surface.SYSTEM) -> None:
    """Delete a hold (audited) and ask for admission passes so held work starts promptly."""
    cluster_queue_ids = list(_cluster_queues_of_hold(hold))
    audited_delete(hold, surface=surface, note=note, stored=False)
    for cq_id in cluster_queue_ids:
        request_admission_pass(cq_id)


def _request_passes(budget: Budget) -> None:
    field, pk = budget.target_ref
    if field == "cluster_queue":
        ids: list[int] = [pk]
    elif field == "local_queue":
        ids = list(LocalQueue.objects.filter(pk=pk).values_list("cluster_queue_id", flat=True))
    else:
        ids = list(_namespace_cluster_queues(pk))
    for cq_id in ids:
        request_admission_pass(cq_id)


def _namespace_cluster_queues(namespace_id: int) -> QuerySet:
    return LocalQueue.objects.filter(namespace_id=namespace_id).values_list("cluster_queue_id", flat=True).distinct()


def _cluster_queues_of_hold(hold: QueueHold) -> list[int]:
    if hold.cluster_queue_id:
        return [hold.cluster_queue_id]
    if hold.local_queue_id:
        return list(LocalQueue.objects.filter(pk=hold.local_queue_id).values_list("cluster_queue_id", flat=True))
    return list(_namespace_cluster_queues(hold.namespace_id))  # type: ignore[arg-type]
