"""The ``sprio`` view of pending work: per workload, the factors that order it (priority, queue
time, its LocalQueue's weights and usage score under the admission mode in force), its place
in its ClusterQueue, the reason it waits and who is ahead of it.

Built on the dashboard's rows (``queues.selectors.workloads.build_rows``), so the reason and
"who is ahead" are the same sentences, redacted the same way: a tenant reads "another tenant's
queue" where an admin reads its name, and a reason that names another tenant's workload is
redacted (``core.redaction``).

Queries for a page of workloads (loaded with their namespace, queues and positions): the
structure (5) and at most 3 for who is ahead (the stored orders, the workloads ahead, their
LocalQueues): 8 at most, whatever the page size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.access import Access
from queues.models import Workload
from queues.selectors.structure import load_structure
from queues.selectors.workloads import AheadItem, WorkloadRow, build_rows

AHEAD_IN_A_LIST = 3
AHEAD_FOR_ONE = 50


@dataclass(frozen=True)
class PriorityRow:
    row: WorkloadRow
    admission_mode: str
    priority_class: str
    namespace_weight: float
    local_queue_weight: float
    usage_score: float | None

    @property
    def workload(self) -> str:
        return f"{self.row.namespace}/{self.row.name}"

    @property
    def local_queue(self) -> str:
        return f"{self.row.namespace}/{self.row.local_queue}"

    @property
    def ahead(self) -> list[AheadItem]:
        return self.row.ahead


def priority_rows(
    viewer: Access, workloads: Sequence[Workload], *, ahead_shown: int = AHEAD_IN_A_LIST
) -> list[PriorityRow]:
    """One row per workload, in the given order (``queue_position`` attached by the caller)."""
    structure = load_structure()
    rows = build_rows(viewer, list(workloads), structure, ahead_shown=ahead_shown)
    out = []
    for row, workload in zip(rows, workloads):
        lq = workload.local_queue
        queue = structure.cluster_queues[(workload.cluster_queue_id or lq.cluster_queue_id)]
        out.append(
            PriorityRow(
                row=row,
                admission_mode=queue.effective_mode,
                priority_class=workload.priority_class,
                namespace_weight=float(workload.namespace.weight),
                local_queue_weight=float(lq.weight),
                usage_score=lq.weighted_share,
            )
        )
    return out
