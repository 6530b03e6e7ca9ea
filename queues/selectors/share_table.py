"""The ``sshare`` view of the cluster: one row per LocalQueue with its weights, decayed usage,
share against its entitlement and its effective place in its ClusterQueue's fair-share order.

**Effective position**: where the LocalQueue's first pending workload stood in its ClusterQueue's
queue order at the last admission pass (``PendingPosition``), and the LocalQueue's rank among the
LocalQueues with pending work there (1 = its head is tried first). That is the order the pass
really used, whatever the admission mode in force; ``usage_score`` is the KEP-4136 score that
orders it under ``UsageBasedAdmissionFairSharing``.

Visibility: the rows are the LocalQueues the caller passes (the API's scoped page); ranks are
counted over every LocalQueue of the ClusterQueue but never name another tenant's.

Queries, whatever the page size: the structure (5), admitted usage on the page (1), workload
counts on the page (1), head positions in the page's ClusterQueues (1): 8.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Min

from queues.models import LocalQueue, PendingPosition, WorkloadState
from queues.selectors import live
from queues.selectors.shares import Share, dominant_share
from queues.selectors.structure import load_structure
from queues.ui.display import amounts


@dataclass(frozen=True)
class ShareRow:
    namespace: str
    name: str
    cluster_queue: str
    admission_mode: str
    namespace_weight: float
    weight: float
    normalized_share: float | None
    entitlement: dict[str, float]
    decayed_usage: dict[str, float]
    admitted: dict[str, int]
    usage_share: Share
    admitted_share: Share
    usage_score: float | None
    pending: int
    admitted_count: int
    head_position: int | None
    rank: int | None
    ranked: int

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def entitlement_display(self) -> list[str]:
        return amounts(self.entitlement)

    @property
    def decayed_usage_display(self) -> list[str]:
        return amounts(self.decayed_usage)

    @property
    def admitted_display(self) -> list[str]:
        return amounts(self.admitted)


def head_positions(cluster_queue_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
    """LocalQueue id -> (ClusterQueue id, position of its first pending workload) (one query)."""
    if not cluster_queue_ids:
        return {}
    rows = (
        PendingPosition.objects.filter(
            cluster_queue_id__in=list(cluster_queue_ids), workload__state=WorkloadState.PENDING
        )
        .values("workload__local_queue_id", "cluster_queue_id")
        .annotate(head=Min("position"))
    )
    heads: dict[int, tuple[int, int]] = {}
    for row in rows:
        lq_id, cq_id, head = row["workload__local_queue_id"], row["cluster_queue_id"], row["head"]
        if lq_id not in heads or head < heads[lq_id][1]:
            heads[lq_id] = (cq_id, head)
    return heads


def _ranks(heads: dict[int, tuple[int, int]]) -> tuple[dict[int, int], dict[int, int]]:
    """LocalQueue id -> rank in its ClusterQueue by head position; ClusterQueue id -> ranked count."""
    by_queue: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for lq_id, (cq_id, head) in heads.items():
        by_queue[cq_id].append((head, lq_id))
    ranks: dict[int, int] = {}
    for members in by_queue.values():
        for rank, (_head, lq_id) in enumerate(sorted(members), start=1):
            ranks[lq_id] = rank
    return ranks, {cq_id: len(members) for cq_id, members in by_queue.items()}


def share_rows(local_queues: Sequence[LocalQueue]) -> list[ShareRow]:
    """The rows of ``local_queues`` (loaded with their namespace and ClusterQueue), in their order."""
    structure = load_structure()
    lq_ids = [lq.pk for lq in local_queues]
    cq_ids = sorted({lq.cluster_queue_id for lq in local_queues})
    admitted = live.admitted_usage(local_queue_ids=lq_ids).by_local_queue() if lq_ids else {}
    counts = live.counts_by_local_queue(local_queue_ids=lq_ids) if lq_ids else {}
    heads = head_positions(cq_ids)
    ranks, ranked = _ranks(heads)
    rows = []
    for lq in local_queues:
        queue = structure.cluster_queues[lq.cluster_queue_id]
        entitlement = structure.local_queue_entitlement(lq.pk)
        capacity = queue.capacity
        normalized = next(
            (entitlement.get(resource, 0.0) / total for resource, total in sorted(capacity.items()) if total > 0),
            None,
        )
        decayed = {resource: float(value) for resource, value in (lq.consumed_resources or {}).items()}
        held = admitted.get(lq.pk, {})
        count = counts.get(lq.pk, live.Counts())
        rows.append(
            ShareRow(
                namespace=lq.namespace.name,
                name=lq.name,
                cluster_queue=queue.name,
                admission_mode=queue.effective_mode,
                namespace_weight=float(lq.namespace.weight),
                weight=float(lq.weight),
                normalized_share=normalized,
                entitlement=entitlement,
                decayed_usage=decayed,
                admitted=held,
                usage_share=dominant_share(decayed, entitlement),
                admitted_share=dominant_share(held, entitlement),
                usage_score=lq.weighted_share,
                pending=count.pending,
                admitted_count=count.admitted,
                head_position=heads[lq.pk][1] if lq.pk in heads else None,
                rank=ranks.get(lq.pk),
                ranked=ranked.get(lq.cluster_queue_id, 0),
            )
        )
    return rows
