"""Budgets on the queue pages: the chips the tree, the queue pages and the overview show.

Registered at ``queues.selectors.live.QUEUE_PAGE_CHIPS`` in ``BudgetsConfig.ready``; one query whatever the
number of budgets shown.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import CharField, Exists, OuterRef, Q, QuerySet, Value
from django.db.models.functions import Cast, Concat

from budgets.models import Budget
from budgets.selectors import budget_status
from budgets.status import BudgetStatus
from core.access import Access
from queues.models import QueueHold
from queues.ui.display import number


@dataclass(frozen=True)
class BudgetChip:
    """A budget attached to a queue, with where it stands this period (``budgets`` app status)."""

    id: int
    name: str
    kind: str
    allocated_hours: str
    action: str
    unit: str
    target: str
    status: BudgetStatus
    thresholds: tuple[float, ...] = ()

    @property
    def level(self) -> str:
        """A CSS class of the budget's one state (``budgets.status.classify``): held or
        exhausted (bad), at risk (warn), ok."""
        return self.status.level


def attached_budgets(
    *, local_queue_ids: Iterable[int] = (), namespace_ids: Iterable[int] = (), cluster_queue_ids: Iterable[int] = ()
) -> dict[tuple[str, int], list[BudgetChip]]:
    """Budgets attached to the given queues with their status, keyed like ``holds`` (two queries)."""
    found: dict[tuple[str, int], list[BudgetChip]] = defaultdict(list)
    query = (
        Q(local_queue_id__in=list(local_queue_ids))
        | Q(namespace_id__in=list(namespace_ids))
        | Q(cluster_queue_id__in=list(cluster_queue_ids))
    )
    for chip, budget in _chips(Budget.objects.filter(query)):
        if budget.local_queue_id:
            found[("localQueue", budget.local_queue_id)].append(chip)
        elif budget.namespace_id:
            found[("namespace", budget.namespace_id)].append(chip)
        elif budget.cluster_queue_id:
            found[("clusterQueue", budget.cluster_queue_id)].append(chip)
    return found


def _chips(queryset: QuerySet[Budget]) -> list[tuple[BudgetChip, Budget]]:
    """Budgets with their status from the last accounting run (one query for any number: whether
    each is held is an ``EXISTS`` on its hold, so the count does not depend on what is shown)."""
    hold_source = Concat(Value("budget:"), Cast(OuterRef("pk"), CharField()))
    rows = list(
        queryset.select_related("state", "flavor", "local_queue__namespace", "namespace", "cluster_queue")
        .annotate(is_held=Exists(QueueHold.objects.filter(source=hold_source)))
        .order_by("name")
    )
    return [
        (
            BudgetChip(
                budget.pk,
                budget.name,
                budget.kind,
                number(budget.allocated_hours),
                budget.action,
                budget.unit_label,
                budget.target_label,
                budget_status(budget, held=budget.is_held),
                tuple(float(t) for t in budget.alert_thresholds or ()),
            ),
            budget,
        )
        for budget in rows
    ]


def visible_budgets(viewer: Access, *, limit: int) -> tuple[list[BudgetChip], int]:
    """The budgets a viewer may see (the API's rule), fullest first: ``limit`` of them and the total."""
    queryset = viewer.visible_to(Budget)
    chips = [chip for chip, _budget in _chips(queryset)]
    chips.sort(key=lambda chip: (-chip.status.percent, chip.name))
    return chips[:limit], len(chips)
