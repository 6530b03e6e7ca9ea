"""Safe admission: a workload with a maximum runtime starts only if its worst case fits.

For a budget with ``safe_admission``, a pending workload that declares ``max_runtime_seconds``
is admitted only if ``quantity x min(max runtime, time left in the period)`` fits in what is
available: the allocation, minus what is charged this period, minus what running workloads
have used since the last accounting run, minus the worst case still ahead of running workloads
that declare a maximum runtime. Candidates are taken in queue order (priority, then queue
time) and each one that fits reserves its worst case, so several admissions in one pass cannot
overrun the budget together. Workloads without a maximum runtime have no worst case and are
left to the budget's hold, as without safe admission.

This is a gate (``queues.admission.gates``): it runs inside the admission pass, before the engine plans.
The arithmetic (what a workload charges, its worst case, whether it overruns) is the engine's
budget rule, ``fairshare.usage.budgets``, which the simulator applies too; what is read from the
database (the ledger, running intervals, the period) stays here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from budgets import accounting
from budgets.models import Budget, BudgetState
from budgets.status import SECONDS_PER_HOUR, format_hours, to_hours
from fairshare.types import BUDGET_INSUFFICIENT
from fairshare.usage import budgets as rules
from queues.admission.gates import Candidate
from queues.models import Workload

REASON = BUDGET_INSUFFICIENT


@dataclass
class _Room:
    budget: Budget
    available: Decimal  # unit-seconds
    seconds_left: Decimal | None  # until the period ends (None: never)


def gate(candidates: Sequence[Candidate], now: datetime) -> Mapping[str, tuple[str, str]]:
    """Which candidates must wait, with the reason naming the budget and the amounts."""
    budgets = list(_budgets_for(candidates))
    if not budgets:
        return {}
    runtimes = dict(
        Workload.objects.filter(
            pk__in=[c.workload_id for c in candidates], max_runtime_seconds__isnull=False
        ).values_list("id", "max_runtime_seconds")
    )
    if not runtimes:
        return {}
    rooms = [room for room in (_room(budget, now) for budget in budgets) if room is not None]
    gated: dict[str, tuple[str, str]] = {}
    for candidate in sorted(candidates, key=lambda c: (-c.priority, c.queued_at, c.key)):
        max_runtime = runtimes.get(candidate.workload_id)
        if max_runtime is None:
            continue
        applicable = [room for room in rooms if _covers(room.budget, candidate)]
        needs = [(room, _worst_case(room, candidate, max_runtime)) for room in applicable]
        blocking = next(((room, need) for room, need in needs if rules.overruns(need, room.available)), None)
        if blocking is not None:
            room, need = blocking
            gated[candidate.key] = (REASON, _message(room, need, max_runtime))
            continue
        for room, need in needs:
            room.available -= need
    return gated


def _budgets_for(candidates: Sequence[Candidate]) -> list[Budget]:
    """The safe-admission budgets over any candidate: all such budgets are read (there are few),
    then matched here, so a pass over thousands of queues sends no list of thousands of ids."""
    lq_ids = {c.local_queue_id for c in candidates}
    ns_ids = {c.namespace_id for c in candidates}
    cq_ids = {c.cluster_queue_id for c in candidates}
    budgets = (
        Budget.objects.filter(safe_admission=True)
        .select_related("flavor", "local_queue__namespace", "namespace", "cluster_queue")
        .order_by("id")
    )
    return [
        budget
        for budget in budgets
        if budget.local_queue_id in lq_ids or budget.namespace_id in ns_ids or budget.cluster_queue_id in cq_ids
    ]


def _covers(budget: Budget, candidate: Candidate) -> bool:
    field, pk = budget.target_ref
    return {
        "local_queue": candidate.local_queue_id,
        "namespace": candidate.namespace_id,
        "cluster_queue": candidate.cluster_queue_id,
    }[field] == pk


def _quantity(budget: Budget, requests: Mapping[str, int]) -> int:
    """Per-second charge before admission: the flavor is not known yet (no assignment), so a
    flavor-limited budget counts the request (the worst case)."""
    return rules.charge_quantity(budget.kind, requests, resource=budget.resource)


def _room(budget: Budget, now: datetime) -> _Room | None:
    """What the budget can still promise at ``now`` (None before its first period)."""
    if now < budget.anchor:
        return None
    period = budget.renewal_rule().period_at(now)
    state = BudgetState.objects.filter(budget=budget).first()
    charged_until = state.as_of if state and state.as_of and state.period_start == period.start else period.start
    used = accounting.used_between(budget.pk, period.start, period.end)
    running = (
        accounting.records_under(budget)
        .filter(ended_at__isnull=True)
        .values_list("admitted_at", "requests", "assignment", "workload__max_runtime_seconds")
    )
    ahead = Decimal(0)
    for admitted_at, requests, assignment, max_runtime in running:
        quantity = accounting.charge_quantity(budget, requests or {}, assignment or {})
        if quantity <= 0:
            continue
        uncharged_from = max(admitted_at, charged_until, period.start)
        if now > uncharged_from:
            ahead += accounting.exact_unit_seconds(quantity, uncharged_from, now)
        if max_runtime is not None:
            end = admitted_at + timedelta(seconds=max_runtime)
            if period.end is not None:
                end = min(end, period.end)
            if end > now:
                ahead += accounting.exact_unit_seconds(quantity, now, end)
    available = budget.allocated_hours * SECONDS_PER_HOUR - used - ahead
    seconds_left = None if period.end is None else Decimal((period.end - now).total_seconds())
    return _Room(budget=budget, available=available, seconds_left=seconds_left)


def _worst_case(room: _Room, candidate: Candidate, max_runtime: int) -> Decimal:
    return rules.worst_case(_quantity(room.budget, candidate.requests), Decimal(max_runtime), room.seconds_left)


def _message(room: _Room, need: Decimal, max_runtime: int) -> str:
    budget = room.budget
    left = max(Decimal(0), room.available)
    return (
        f"safe admission: up to {format_hours(to_hours(need))} {budget.unit_label} at its maximum runtime of "
        f"{max_runtime}s, but budget {budget.name} has {format_hours(to_hours(left))} of "
        f"{format_hours(budget.allocated_hours)} left this period"
    )
