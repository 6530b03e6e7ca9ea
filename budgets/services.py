"""Budget writes: the accounting cycle the control loop runs, and audited budget changes.

``reconcile_budget`` is one budget's whole cycle in one transaction under the budget's lock:
append the ledger, measure the period, record renewal/threshold/exhaustion events, make the
hold match, save the state. Alerts and admission passes are queued for after the commit.
The pages and the playground change budgets through ``update_budget`` (validated by
``Budget.clean()``, audited), which re-runs the cycle so a raised allocation lifts its hold at
once; the API and the admin delete them through ``delete_budget``. The API creates them as every
policy object (``save_policy_object``), the admin through ``AuditedAdmin``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from budgets import accounting, alerts, enforcement
from budgets.models import Budget, BudgetEvent, BudgetState
from budgets.status import BudgetStatus, build_status, format_hours
from core.audit import audited_delete, audited_write
from core.enqueue import enqueue_on_commit
from core.models import Surface
from queues.services.policy import save_policy_object

logger = logging.getLogger(__name__)


@dataclass
class CycleResult:
    budget: str
    lines: int = 0
    corrections: int = 0
    events: list[str] = field(default_factory=list)
    hold: str = enforcement.HoldChange.NONE.value
    status: BudgetStatus | None = None


def reconcile_budget(budget_id: int, *, now: datetime | None = None) -> CycleResult | None:
    """One accounting and enforcement cycle for one budget (None when it no longer exists)."""
    with transaction.atomic():
        accounting.lock_budget(budget_id)
        budget = (
            Budget.objects.select_related("local_queue__namespace", "namespace", "cluster_queue", "flavor")
            .filter(pk=budget_id)
            .first()
        )
        if budget is None:
            return None
        moment = now or timezone.now()  # taken under the lock: never behind the previous run
        state, _ = BudgetState.objects.get_or_create(budget=budget)
        charged = accounting.charge_budget(budget, moment)
        measurement = accounting.measure(
            budget, moment, burn_window_seconds=settings.BUDGET_BURN_RATE_WINDOW_SECONDS, previous=state
        )
        status = build_status(
            budget_id=budget.pk,
            name=budget.name,
            unit=budget.unit_label,
            allocated_hours=budget.allocated_hours,
            measurement=measurement,
            held=enforcement.current_hold(budget.pk) is not None,
            thresholds=[float(t) for t in budget.alert_thresholds or ()],
        )
        result = CycleResult(budget=budget.name, lines=charged.lines, corrections=charged.corrections, status=status)
        if measurement is not None:
            events = alerts.record_period_events(
                budget,
                status,
                previous_period_start=state.period_start,
                used_unit_seconds=measurement.used,
                now=moment,
            )
            result.events = [event.kind for event in events]
        change = enforcement.reconcile_hold(
            budget, status, now=moment, lift_reason=_lift_reason(budget, state, measurement)
        )
        result.hold = change.value
        held = change in (enforcement.HoldChange.PLACED, enforcement.HoldChange.UPDATED) or (
            status.held and change == enforcement.HoldChange.NONE
        )
        result.status = replace(status, held=held)
        _save_state(state, budget, measurement)
    return result


def reconcile_all_budgets(*, now: datetime | None = None) -> list[CycleResult]:
    """Every budget in turn, each in its own transaction: one failing budget stops no other."""
    results = []
    for budget_id in Budget.objects.order_by("id").values_list("id", flat=True):
        result = reconcile_budget_or_record_failure(budget_id, now=now)
        if result is not None:
            results.append(result)
    return results


def reconcile_budget_or_record_failure(budget_id: int, *, now: datetime | None = None) -> CycleResult | None:
    """``reconcile_budget``; when its cycle fails (a stored row the validation of today refuses,
    a bug), the budget's state says so (status ``error``, never ``ok``) and an
    ``AccountingFailed`` event alerts once, until a cycle works again. None on failure."""
    try:
        return reconcile_budget(budget_id, now=now)
    except Exception as error:  # noqa: BLE001 - one failing budget stops no other; recorded below
        logger.exception("budget %s: accounting cycle failed; the next run retries it", budget_id)
        try:
            _record_failure(budget_id, error, now=now or timezone.now())
        except Exception:  # noqa: BLE001 - recording must not stop the other budgets either
            logger.exception("budget %s: could not record the failed cycle", budget_id)
        return None


def _record_failure(budget_id: int, error: Exception, *, now: datetime) -> None:
    # The class name only: an exception's text may hold data (a date, a number) of any size.
    reason = f"accounting failed ({type(error).__name__})"
    with transaction.atomic():
        accounting.lock_budget(budget_id)
        budget = Budget.objects.filter(pk=budget_id).first()
        if budget is None:
            return
        state, _ = BudgetState.objects.get_or_create(budget=budget)
        if state.error == reason:
            return  # alerted already; the log has each failure
        state.error = reason
        state.save(update_fields=["error", "updated_at"])
        status = build_status(
            budget_id=budget.pk,
            name=budget.name,
            unit=budget.unit_label,
            allocated_hours=budget.allocated_hours,
            measurement=None,
            held=enforcement.current_hold(budget.pk) is not None,
            error=reason,
        )
        alerts.record_event(
            budget,
            BudgetEvent.Kind.ACCOUNTING_FAILED,
            status,
            f"budget {budget.name}: {reason}; it is not measured or enforced until this is fixed",
            now=now,
        )


def _lift_reason(budget: Budget, state: BudgetState, measurement: accounting.Measurement | None) -> str:
    if measurement is None:
        return "the budget's first period has not started"
    if state.period_start is not None and state.period_start != measurement.period_start:
        return f"a new period started {measurement.period_start:%Y-%m-%d}"
    if state.allocated_hours is not None and budget.allocated_hours > state.allocated_hours:
        return (
            f"allocation raised from {format_hours(state.allocated_hours)} to "
            f"{format_hours(budget.allocated_hours)} {budget.unit_label}"
        )
    return "usage is below the allocation"


def _save_state(state: BudgetState, budget: Budget, measurement: accounting.Measurement | None) -> None:
    if measurement is None:
        state.as_of = state.period_start = state.period_end = state.exhausted_at = None
        state.used_unit_seconds = state.burn_rate = Decimal(0)
    else:
        state.as_of = measurement.as_of
        state.period_start = measurement.period_start
        state.period_end = measurement.period_end
        state.used_unit_seconds = measurement.used
        state.burn_rate = measurement.burn_rate.quantize(Decimal("0.000000001"))
        state.exhausted_at = measurement.exhausted_at
    state.allocated_hours = budget.allocated_hours
    state.error = ""
    state.save()


# --- budget changes (API, admin, CLI) -------------------------------------------------------------


def update_budget(budget: Budget, *, actor: Any = None, surface: str = Surface.API, **changes: Any) -> Budget:
    """Change fields (validated: a field error names the field), audit, and re-run the cycle."""
    with audited_write(budget, actor=actor, surface=surface):
        stored = Budget.objects.get(pk=budget.pk)  # locked by ``audited_write``
        for name, value in changes.items():
            if name not in {f.name for f in Budget._meta.concrete_fields} or name in {"id", "created_at"}:
                raise ValueError(f"{name}: not a budget field")
            setattr(stored, name, value)
        stored.full_clean()
        stored.save()
        request_reconcile(stored.pk)
    return stored


def create_budget(budget: Budget, *, actor: Any = None, surface: str = Surface.API, **_: Any) -> Budget:
    """Create ``budget`` as every policy object is created (``save_policy_object``: validated by
    ``Budget.clean``, a field error names the field, one audit row), then measure it at once.
    Extra keyword arguments (``quotas``: a budget has none) are accepted so the generic add page
    can call it like ``save_policy_object``."""
    save_policy_object(budget, actor=actor, surface=surface)
    request_reconcile(budget.pk)
    return budget


def delete_budget(budget: Budget, *, actor: Any = None, surface: str = Surface.API) -> None:
    """Delete a budget (audited); its hold goes with it (see ``remove_hold_of_deleted_budget``).

    Takes the budget's lock first, as an accounting run does: a run that is lifting the hold
    holds the hold row and needs the budget row for its event, so a delete that took the budget
    row first deadlocked against it. Every delete path (API, admin, a cascade from the target)
    takes the lock, this one before it reads anything."""
    with transaction.atomic():
        accounting.lock_budget(budget.pk)
        audited_delete(budget, actor=actor, surface=surface, stored=False)


def remove_hold_of_deleted_budget(budget_id: int, name: str) -> None:
    """A deleted budget must not leave its target held forever (any deletion path: API, admin,
    cascade from its target); called from the ``post_delete`` signal."""
    hold = enforcement.current_hold(budget_id)
    if hold is not None:
        enforcement.lift_hold(hold, note=f"budget {name} deleted")


def request_reconcile(budget_id: int) -> None:
    """Run the budget's cycle soon after the commit (the beat schedule runs it anyway)."""
    enqueue_on_commit("budgets.reconcile_budget", budget_id)  # broker down: the next scheduled run does it
