"""Budgets in a live export: each at what its current period had used at the replay's start.

The ledger (``budgets.accounting``) holds the exact charges; ``used_between`` sums the current
period's up to time 0. The simulator counts weekly and N-day periods from t=0, so the export
adds when the current period ends (``firstRenewalAt``); a monthly budget is exported with its
``anchor`` and renews on the calendar (the live export's ``clock.start`` is t=0).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from budgets import accounting
from budgets.models import Budget
from budgets.status import SECONDS_PER_HOUR
from fairshare.durations import format_duration

_WEEK = 7 * 86400


def exported_budgets(
    local_queues: Mapping[int, str],
    namespaces: Mapping[int, str],
    hides: Callable[[int], bool],
    *,
    start: datetime,
) -> list[dict[str, Any]]:
    """Scenario ``budgets`` entries; ``local_queues``/``namespaces`` map ids to exported names,
    ``hides(namespace_id)`` says whether the budget belongs to a tenant the viewer may not see."""
    result = []
    hidden = 0
    budgets = Budget.objects.select_related("local_queue", "cluster_queue", "flavor").order_by("name")
    for budget in budgets:
        owner_namespace = budget.local_queue.namespace_id if budget.local_queue is not None else budget.namespace_id
        name = budget.name
        if owner_namespace is not None and hides(owner_namespace):
            hidden += 1
            name = f"budget-{hidden}"
        entry: dict[str, Any] = {"name": name}
        if budget.local_queue_id:
            entry["localQueue"] = local_queues[budget.local_queue_id]
        elif budget.namespace_id:
            entry["namespace"] = namespaces[budget.namespace_id]
        elif budget.cluster_queue is not None:
            entry["clusterQueue"] = budget.cluster_queue.name
        entry["kind"] = budget.kind
        if budget.kind == Budget.Kind.RESOURCE_HOURS:
            entry["resource"] = budget.resource
            if budget.flavor is not None:
                entry["flavor"] = budget.flavor.name
        entry["allocatedHours"] = _number(budget.allocated_hours)
        entry["action"] = budget.action
        entry.update(_period_at(budget, start))
        result.append(entry)
    return result


def _period_at(budget: Budget, start: datetime) -> dict[str, Any]:
    """``usedHours`` by ``start`` in the period containing it, and the renewal from there on."""
    if start < budget.anchor:
        return {}  # the first period has not begun: nothing used yet, nothing to renew
    period = budget.renewal_rule().period_at(start)
    used = accounting.used_between(budget.pk, period.start, start) / SECONDS_PER_HOUR
    fields: dict[str, Any] = {}
    if used > 0:
        fields["usedHours"] = round(float(used), 6)
    if period.end is None:
        return fields
    if budget.renewal == Budget.Renewal.MONTHLY:
        # the simulator renews on the calendar from the anchor (the live export sets clock.start)
        fields["renewal"], fields["anchor"] = "monthly", budget.anchor.isoformat()
        return fields
    if budget.renewal == Budget.Renewal.WEEKLY:
        fields["renewal"], length = "weekly", _WEEK
    else:
        days = budget.renewal_days
        fields["renewal"], fields["renewalDays"], length = "days", days, int(days) * 86400  # type: ignore[arg-type]  # set for "days" (Budget.clean)
    first = round((period.end - start).total_seconds())
    fields["firstRenewalAt"] = format_duration(min(max(first, 1), length))
    return fields


def _number(value: Decimal) -> int | float:
    number = float(value)
    return int(number) if number.is_integer() else number
