"""Analytics over the admission history: waits and evictions per queue over time, and who is
starved while capacity is lent out.

Waits and evictions come from ``AdmissionRecord`` (one row per admission): the wait of an
admission is from the workload's queue timestamp, or from the end of its previous admission when
it was evicted, to this admission. Two queries per chart pair, capped at ``MAX_ADMISSIONS`` rows
(the newest), so a busy queue's 30 days never cost more than that.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from core.access import Access
from queues.models import AdmissionRecord, Namespace
from queues.selectors import history, live
from queues.selectors.shares import Share, add, dominant_share
from queues.selectors.structure import ClusterStructure
from queues.ui.display import amounts

MAX_ADMISSIONS = 20_000
# Bucket width per range: enough buckets for a curve, enough admissions per bucket for a p95.


def nearest_rank(ordered: list[float], p: float) -> float:
    """Nearest-rank percentile of sorted values (the simulator's definition)."""
    return ordered[max(0, math.ceil(p * len(ordered)) - 1)]


@dataclass
class WaitHistory:
    """Per bucket: the start of the bucket, admissions, p50 and p95 wait (seconds)."""

    times: list[datetime] = field(default_factory=list)
    admissions: list[int] = field(default_factory=list)
    p50: list[float] = field(default_factory=list)
    p95: list[float] = field(default_factory=list)
    evictions: dict[str, list[int]] = field(default_factory=dict)  # reason -> count per bucket
    eviction_times: list[datetime] = field(default_factory=list)
    capped: bool = False


def _bucket(moment: datetime, start: datetime, width: timedelta) -> datetime:
    return start + width * int((moment - start) / width)


def wait_history(scope: Q, window: history.Window) -> WaitHistory:
    """Waits and evictions of the admissions matching ``scope`` (a ``Q`` on AdmissionRecord:
    ``Q(local_queue_id=...)``, ``Q(cluster_queue_id__in=...)``) inside ``window``."""
    width = window.bucket
    previous_end = (
        AdmissionRecord.objects.filter(workload_id=OuterRef("workload_id"), admitted_at__lt=OuterRef("admitted_at"))
        .order_by("-admitted_at")
        .values("ended_at")[:1]
    )
    rows = list(
        AdmissionRecord.objects.filter(scope, admitted_at__gte=window.start, admitted_at__lte=window.end)
        .annotate(waiting_since=Coalesce(Subquery(previous_end), F("workload__queued_at")))
        .order_by("-admitted_at")
        .values_list("admitted_at", "waiting_since")[:MAX_ADMISSIONS]
    )
    waits: dict[datetime, list[float]] = defaultdict(list)
    for admitted_at, since in rows:
        waits[_bucket(admitted_at, window.start, width)].append(max(0.0, (admitted_at - since).total_seconds()))
    result = WaitHistory(capped=len(rows) >= MAX_ADMISSIONS)
    for moment in sorted(waits):
        values = sorted(waits[moment])
        result.times.append(moment)
        result.admissions.append(len(values))
        result.p50.append(nearest_rank(values, 0.50))
        result.p95.append(nearest_rank(values, 0.95))
    evicted = (
        AdmissionRecord.objects.filter(
            scope, end_reason=AdmissionRecord.EndReason.EVICTED, ended_at__gte=window.start, ended_at__lte=window.end
        )
        .values_list("ended_at", "end_message")
        .order_by("ended_at")[:MAX_ADMISSIONS]
    )
    counts: dict[str, dict[datetime, int]] = defaultdict(lambda: defaultdict(int))
    for ended_at, message in evicted:
        counts[eviction_reason(message)][_bucket(ended_at, window.start, width)] += 1  # type: ignore[arg-type]  # filtered on ended_at
    moments = sorted({moment for per in counts.values() for moment in per})
    result.eviction_times = moments
    result.evictions = {reason: [per.get(m, 0) for m in moments] for reason, per in sorted(counts.items())}
    return result


def eviction_reason(message: str) -> str:
    """The reason code of an eviction (``Preempted: ...`` -> ``Preempted``); messages without
    one count as ``Evicted``."""
    head, colon, _rest = (message or "").partition(":")
    return head.strip() if colon and head.strip() and " " not in head.strip() else "Evicted"


# --- starved and reclaimable ---------------------------------------------------------------------


@dataclass
class StarvedTenant:
    namespace: str
    share: Share
    pending: int
    cluster_queues: list[str]


@dataclass
class Reclaimable:
    """Capacity a starved ClusterQueue is entitled to that others in its cohort borrow now."""

    cluster_queue: str
    cohort: str
    pending: int
    amounts: list[str]
    lenders: list[str]  # the queues borrowing it (names; "other queues" for tenants)
    reclaim: bool  # whether reclaimWithinCohort lets preemption take it back


@dataclass
class StarvedSummary:
    tenants: list[StarvedTenant] = field(default_factory=list)
    reclaimable: list[Reclaimable] = field(default_factory=list)


def starved_and_reclaimable(
    viewer: Access,
    structure: ClusterStructure,
    admitted: live.AdmittedUsage,
    counts: Mapping[int, live.Counts],
    reclaim_policy: Mapping[int, str],
) -> StarvedSummary:
    """Tenants below their weighted entitlement that have work waiting, and for each ClusterQueue
    that waits while under its nominal quota, how much of it others in the cohort borrow.

    No queries of its own: everything comes from the page's structure and aggregates (plus the
    namespace names of the starved, one query). ``reclaim_policy`` maps ClusterQueue id to its
    ``reclaimWithinCohort`` setting.
    """
    summary = StarvedSummary()
    namespace_of = structure.namespace_of()
    queue_of = structure.queue_of()
    pending_ns: dict[int, int] = defaultdict(int)
    pending_cq: dict[int, int] = defaultdict(int)
    ns_queues: dict[int, set[int]] = defaultdict(set)
    for lq_id, count in counts.items():
        if count.pending and lq_id in namespace_of:
            pending_ns[namespace_of[lq_id]] += count.pending
            pending_cq[queue_of[lq_id]] += count.pending
            ns_queues[namespace_of[lq_id]].add(queue_of[lq_id])
    by_namespace = admitted.by_group(namespace_of)
    starved_ids = []
    for ns_id, pending in pending_ns.items():
        if not viewer.can_read_namespace(ns_id):
            continue
        share = dominant_share(by_namespace.get(ns_id, {}), structure.namespace_entitlement(ns_id))
        if share.ratio is not None and share.ratio < 1.0:
            starved_ids.append((ns_id, share, pending))
    names = dict(Namespace.objects.filter(id__in=[i for i, _s, _p in starved_ids]).values_list("id", "name"))
    summary.tenants = sorted(
        (
            StarvedTenant(
                names[ns_id], share, pending, sorted(structure.cluster_queues[q].name for q in ns_queues[ns_id])
            )
            for ns_id, share, pending in starved_ids
        ),
        key=lambda t: (t.share.ratio or 0.0, t.namespace),
    )
    used = admitted.by_cluster_queue_flavor(queue_of)
    borrowed = {cq_id: _borrowed(structure, cq_id, used) for cq_id in structure.cluster_queues}
    visible_queues = {queue_of[lq] for lq in namespace_of if viewer.can_read_namespace(namespace_of[lq])}
    for cq_id, pending in sorted(pending_cq.items(), key=lambda item: structure.cluster_queues[item[0]].name):
        queue = structure.cluster_queues[cq_id]
        path = structure.cohort_path(queue.cohort_id)
        if not path or (not viewer.is_admin and cq_id not in visible_queues):
            continue
        root = path[0]
        unused = {
            key: cell.nominal - used.get(cq_id, {}).get(key, 0)
            for cell in queue.quotas
            for key in [(cell.flavor, cell.resource)]
            if cell.nominal > used.get(cq_id, {}).get(key, 0)
        }
        if not unused:
            continue
        take: dict[str, float] = {}
        lenders: set[str] = set()
        for other_id in structure.subtree_queue_ids(root.id) - {cq_id}:
            for key, amount in borrowed[other_id].items():
                if key in unused and amount > 0:
                    add(take, {key[1]: min(amount, unused[key])})
                    lenders.add(structure.cluster_queues[other_id].name)
        if not take:
            continue
        summary.reclaimable.append(
            Reclaimable(
                cluster_queue=queue.name,
                cohort=root.name,
                pending=pending,
                amounts=amounts(take),
                lenders=sorted(lenders) if viewer.is_admin else ["other queues"],
                reclaim=reclaim_policy.get(cq_id, "Never") != "Never",
            )
        )
    return summary


def _borrowed(
    structure: ClusterStructure, cq_id: int, used: Mapping[int, Mapping[tuple[str, str], int]]
) -> dict[tuple[str, str], int]:
    nominal = {(c.flavor, c.resource): c.nominal for c in structure.cluster_queues[cq_id].quotas}
    return {
        key: amount - nominal.get(key, 0) for key, amount in used.get(cq_id, {}).items() if amount > nominal.get(key, 0)
    }
