"""Extension points: the one registry through which an app plugs into an app below it.

The layers run one way (config > playground > budgets > queues > core > fairshare): queues never
imports budgets. Where a lower app needs a higher one's help (a veto before admission, chips on
its pages, a part of the demo, a collector in the scrape) it declares an *extension point*, typed
by the values it expects, next to the code that reads it; the higher app registers its values
from its ``AppConfig.ready``; the lower app reads them with ``items``::

    # queues/admission/gates.py (the consumer declares the point and its type)
    ADMISSION_GATES: ExtensionPoint[Gate] = ExtensionPoint("admission gates")
    for name, gate in extensions.items(ADMISSION_GATES): ...

    # budgets/apps.py, BudgetsConfig.ready (the provider registers)
    extensions.register(ADMISSION_GATES, "budgets.safe_admission", safe_admission.gate)

The API:

* ``register(point, name, value)``: add ``value`` under ``name``, or replace what that name held
  (registration is idempotent by name, so a second ``ready`` or a reload changes nothing);
* ``unregister(point, name)``: remove it (no error when absent); tests use it to swap fakes in;
* ``items(point)``: ``(name, value)`` pairs in registration order, a copy the caller may keep.

The points declared today:

* ``queues.admission.gates.ADMISSION_GATES``: per-workload vetoes run before each admission pass
  (budgets: safe admission);
* ``queues.selectors.live.QUEUE_PAGE_CHIPS``: budget chips on the queue pages, attached to queues
  and visible to a viewer (budgets: its budgets);
* ``queues.demo.DEMO_EXTRAS``: an app's part of the demo data (budgets: its budgets and charges);
* ``queues.metrics.METRICS_COLLECTORS``: collectors of database state added to ``/metrics``
  (budgets: budget usage; playground: the what-if lane).
* ``core.webhooks.DELIVERY_OBSERVERS``: told of each change of a webhook delivery's status
  (budgets: a budget event's ``webhook_*`` fields follow its budget's own delivery).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, final

T = TypeVar("T")


@final
class ExtensionPoint(Generic[T]):
    """A key of the registry; ``T`` is the type of the values registered under it. Points compare
    by identity: declare each one once, as a module-level constant of the app that reads it."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"ExtensionPoint({self.name!r})"


_registry: dict[ExtensionPoint[Any], dict[str, Any]] = {}


def register(point: ExtensionPoint[T], name: str, value: T) -> None:
    """Add (or replace) ``value`` under ``name`` at ``point``."""
    _registry.setdefault(point, {})[name] = value


def unregister(point: ExtensionPoint[T], name: str) -> None:
    """Remove what ``name`` registered at ``point``, if anything."""
    _registry.get(point, {}).pop(name, None)


def items(point: ExtensionPoint[T]) -> list[tuple[str, T]]:
    """What is registered at ``point``, as ``(name, value)`` in registration order."""
    return list(_registry.get(point, {}).items())
