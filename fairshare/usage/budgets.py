"""Time budgets: the arithmetic, written once for the live budgets and the simulator.

A budget allocates hours of one kind to a target (LocalQueue, namespace or ClusterQueue):

* ``WallTime`` counts admitted wall time, one unit per running workload whatever it requests;
* ``ResourceHours`` counts requests of one resource x time, optionally only while that resource
  is placed on one flavor.

The rules here, and the only place they live:

* **What a workload charges** per second (``charge_quantity``), in millis of a unit: 1000 for
  WallTime, the request of the budget's resource for ResourceHours (0 when it runs that
  resource on another flavor than the budget's; before placement the request counts, the worst
  case).
* **Exhausted** when used >= allocated (``exhausted``), exactly; no rounding of either side.
  Raising the allocation or a new period makes it false again.
* **What follows** (``stop_policy``): nothing while not exhausted, else the budget's action,
  ``Hold`` (new work waits, running work finishes) or ``HoldAndDrain`` (running work is evicted
  too, reason ``BudgetExhausted``); ``drains`` says which.
* **When it runs out** at a constant burn rate (``seconds_to_exhaustion``): the live forecast and
  the simulator's predicted crossing.
* **Safe admission** (``worst_case``, ``overruns``): a workload that declares a maximum runtime
  may start only if ``quantity x min(max runtime, time left in the period)`` fits what is left.

Amounts are numbers of the caller's choosing, consistently: the live budgets use exact
``Decimal`` unit-seconds (seconds of wall time, or base-unit-seconds of a resource); the
simulator integrates ``float`` hours. Pure: no clock, no I/O; periods are the caller's (live:
``budgets.periods``; simulator: ``renewal_seconds`` or ``fairshare.simulation.calendar``).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import TypeVar

from fairshare.errors import ValidationError
from fairshare.types import STOP_HOLD, STOP_HOLD_AND_DRAIN, STOP_NONE

WALL_TIME = "WallTime"
RESOURCE_HOURS = "ResourceHours"
BUDGET_KINDS = (WALL_TIME, RESOURCE_HOURS)
BUDGET_ACTIONS = (STOP_HOLD, STOP_HOLD_AND_DRAIN)

WALL_TIME_QUANTITY = 1000  # one workload, in millis: WallTime counts workloads, not their requests
MILLIS_PER_UNIT = 1000
SECONDS_PER_HOUR = 3600

# Exact amounts (Decimal unit-seconds, live) or integrated ones (float hours, simulator).
N = TypeVar("N", float, Decimal)


def charge_quantity(
    kind: str,
    requests: Mapping[str, int],
    *,
    resource: str | None = None,
    flavor: str | None = None,
    assignment: Mapping[str, str] | None = None,
) -> int:
    """Millis of a unit charged per second of running: ``WALL_TIME_QUANTITY`` for WallTime, else
    the request of ``resource``. A budget limited to ``flavor`` charges 0 for a workload whose
    ``assignment`` places the resource elsewhere; ``assignment=None`` means not placed yet
    (a pending workload), and then the request counts: the worst case."""
    if kind == WALL_TIME:
        return WALL_TIME_QUANTITY
    if kind != RESOURCE_HOURS:
        raise ValidationError("kind", f"expected one of {', '.join(BUDGET_KINDS)}, got {kind!r}")
    if resource is None:
        raise ValidationError("resource", "a ResourceHours budget counts one resource")
    amount = int(requests.get(resource, 0) or 0)
    if amount and flavor is not None and assignment is not None and assignment.get(resource) != flavor:
        return 0
    return amount


def exhausted(used: N, allocated: N, *, slack: N | int = 0) -> bool:
    """Used up: ``used >= allocated``. ``slack`` absorbs integration error (the simulator's
    float hours); exact amounts pass none."""
    return used + slack >= allocated


def stop_policy(is_exhausted: bool, action: str) -> str:
    """The stop policy a budget puts on its target: ``None`` while not exhausted, else its
    ``action`` (``Hold`` or ``HoldAndDrain``)."""
    if action not in BUDGET_ACTIONS:
        raise ValidationError("action", f"expected one of {', '.join(BUDGET_ACTIONS)}, got {action!r}")
    return action if is_exhausted else STOP_NONE


def drains(policy: str) -> bool:
    """Does the budget's hold evict running work too (``HoldAndDrain``)?"""
    return policy == STOP_HOLD_AND_DRAIN


def seconds_to_exhaustion(used: N, allocated: N, rate: N) -> N | None:
    """Seconds until ``used`` reaches ``allocated`` at ``rate`` (amount per second): 0 when
    already there, None when nothing burns."""
    if rate <= 0:
        return None
    seconds = (allocated - used) / rate
    return seconds if seconds > 0 else seconds - seconds  # a zero of the callers' type


def worst_case(quantity: int, max_runtime: N, seconds_left: N | None = None) -> N:
    """Unit-seconds a workload charging ``quantity`` millis per second can use at most in this
    period: its maximum runtime, cut at the period's end (``seconds_left``; None: it never
    ends)."""
    seconds = max_runtime if seconds_left is None else min(max_runtime, seconds_left)
    return quantity * seconds / MILLIS_PER_UNIT


def overruns(need: N, available: N) -> bool:
    """Safe admission: the workload waits when its worst case exceeds what is left (a worst case
    that uses exactly what is left is admitted)."""
    return need > available
