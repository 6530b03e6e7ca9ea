"""Workload list and detail: state, position, the pending reason as a sentence, and who is ahead.

"Who is ahead" comes from the queue order the admission pass stores (``PendingOrder``, read
per workload through the ``PendingPosition`` view): for a pending workload at
position p in its ClusterQueue, the pending workloads with a lower position, grouped by their
LocalQueue, with the reason their queue ranks first under the admission mode in force. One
grouped query serves a whole page (one conditional count per pending row on it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from django.core.paginator import Page, Paginator
from django.db.models import F, QuerySet
from django.http import QueryDict

from core.access import Access
from core.redaction import OTHER_TENANT_QUEUE, reason_redactor
from fairshare import types as engine
from fairshare.admission.reasons import format_score
from queues.filtersets import WorkloadFilterSet
from queues.models import AdmissionRecord, Cluster, LocalQueue, PendingOrder, Workload, WorkloadState
from queues.models.workload import (
    WorkloadQuerySet,
    attach_queue_positions,
    fill_estimated_positions,
    total_requests,
)
from queues.selectors.reasons import TITLES, sentence, title
from queues.selectors.reasons import shortages as reason_shortages
from queues.selectors.structure import ClusterStructure
from queues.ui.display import amounts

PAGE_SIZE = 25  # with the reasons and who is ahead, 25 rows are about three screens at 1440x900
_POSITION = F("queue_position").asc(nulls_last=True)
_QUEUE_ORDER = ("local_queue__cluster_queue__name", _POSITION, "-id")
# The orders a list can ask for (``?sort=<name>`` or ``-<name>``; the workload table's sortable
# columns), each as (ascending, descending), with ties broken by id so that pages never repeat
# or skip a row. "newest"/"oldest" (the default of the whole list) follow submission order (the
# primary key, indexed): sorting 100,000 rows by queue timestamp on every page load would cost
# more than the whole rest of the page, so only a click on "Queued" does it.
ORDERINGS: dict[str, tuple[tuple[Any, ...], tuple[Any, ...]]] = {
    "name": (("name", "id"), ("-name", "-id")),
    "queue": (
        ("namespace__name", "local_queue__name", "-id"),
        ("-namespace__name", "-local_queue__name", "-id"),
    ),
    # descending puts what waits first (in queue order), then what runs: a queue's page
    "state": (("state", *_QUEUE_ORDER), (F("state").desc(), *_QUEUE_ORDER)),
    "priority": (("priority", "queued_at", "id"), ("-priority", "queued_at", "id")),
    # pending work in queue order per ClusterQueue, then what runs or ran (no position)
    "position": (
        _QUEUE_ORDER,
        ("local_queue__cluster_queue__name", F("queue_position").desc(nulls_last=True), "-id"),
    ),
    "queued": (("queued_at", "id"), ("-queued_at", "-id")),
    "newest": (("-id",), ("id",)),
}
# Older spellings of ``?sort=`` still honoured (bookmarks, links in the docs).
LEGACY_SORTS = {"oldest": "-newest", "waiting-first": "-state"}
_NEEDS_POSITION = {"state", "position"}
SORTS = {"waiting-first": ORDERINGS["state"][1]}  # the API's queue lists (``api/views/observe.py``)
EXPORT_CHUNK = 1_000  # workloads loaded per query by an export
AHEAD_SHOWN = 2


@dataclass
class AheadItem:
    """Pending workloads of one LocalQueue ahead of a workload, and why that queue ranks first."""

    label: str
    count: int
    why: str
    namespace: str = ""
    name: str = ""


@dataclass
class WorkloadRow:
    id: int
    namespace: str
    name: str
    local_queue: str
    cluster_queue: str
    state: str
    priority: int
    requests: list[str]
    queued_at: datetime
    admitted_at: datetime | None
    finished_at: datetime | None
    position: int | None
    reason_code: str
    reason_title: str
    reason: str
    wall_time_seconds: int
    cluster: str
    evictions: int
    last_eviction: str = ""
    ahead: list[AheadItem] = field(default_factory=list)
    ahead_more: int = 0
    # every short resource the reason names, dominant first (``reasons.shortages``)
    shortages: list[dict[str, Any]] = field(default_factory=list)
    # "ranked" by the last pass, or "estimated" until a pass sees it (``Workload.queue_position_state``)
    position_state: str | None = None


def sort_key(value: str | None, state: list[str]) -> str:
    """The requested order (``name`` or ``-name`` of ``ORDERINGS``); lists of pending (and
    admitted) work default to queue order, the others to the newest first."""
    value = LEGACY_SORTS.get(value or "", value)
    if value and value.removeprefix("-") in ORDERINGS:
        return value
    active = {WorkloadState.PENDING, WorkloadState.ADMITTED}
    return "position" if state and set(state) <= active else "newest"


def ordering(sort: str) -> tuple[Any, ...]:
    ascending, descending = ORDERINGS[sort.removeprefix("-")]
    return descending if sort.startswith("-") else ascending


def _base(viewer: Access) -> WorkloadQuerySet:
    queryset = viewer.visible_to(Workload.objects.with_reasons()).select_related(
        "namespace", "local_queue", "local_queue__cluster_queue", "cluster_queue", "cluster", "cluster_job__cluster"
    )
    return cast(WorkloadQuerySet, queryset)  # visible_to() keeps the queryset's class


@dataclass
class WorkloadPage:
    page: Page
    rows: list[WorkloadRow]
    filterset: WorkloadFilterSet
    sort: str


def workload_page(
    viewer: Access,
    params: QueryDict,
    structure: ClusterStructure,
    *,
    page_size: int = PAGE_SIZE,
    fixed: Mapping[str, Any] | None = None,
) -> WorkloadPage:
    """One page of the viewer's workloads, filtered by ``params`` (the API's filter names).

    ``fixed`` narrows the base queryset (a queue's detail page lists only that queue's workloads).
    """
    filterset, filtered = _filtered(viewer, params, fixed)
    rows = cast(WorkloadQuerySet, filtered)
    sort = sort_key(params.get("sort"), params.getlist("state"))
    # Page over ids first (an index-only walk even deep into 100,000 rows), then load that page's
    # rows with their queues; the count needs no queue order.
    counted: Any = _Counted(_ordered_ids(rows, sort), rows)  # pages like a queryset
    page = Paginator(counted, page_size).get_page(params.get("page", 1))
    ids = list(page.object_list)
    by_id = {workload.id: workload for workload in attach_queue_positions(_base(viewer).filter(id__in=ids))}
    workloads = [by_id[i] for i in ids if i in by_id]
    return WorkloadPage(page=page, rows=build_rows(viewer, workloads, structure), filterset=filterset, sort=sort)


def _ordered_ids(rows: WorkloadQuerySet, sort: str) -> QuerySet:
    """The ids of ``rows`` in the order ``sort`` names (queue positions joined only to order)."""
    ordered = rows.with_queue_position() if sort.removeprefix("-") in _NEEDS_POSITION else rows
    return ordered.order_by(*ordering(sort)).values_list("id", flat=True)


def _filtered(viewer: Access, params: QueryDict, fixed: Mapping[str, Any] | None) -> tuple[WorkloadFilterSet, Any]:
    queryset = _base(viewer)
    if fixed:
        queryset = queryset.filter(**fixed)
    filterset = WorkloadFilterSet(params, queryset=queryset)
    return filterset, (filterset.qs if filterset.is_valid() else queryset.none())


@dataclass
class WorkloadExport:
    rows: list[WorkloadRow]
    total: int
    sort: str


def workload_export(
    viewer: Access, params: QueryDict, *, limit: int, fixed: Mapping[str, Any] | None = None
) -> WorkloadExport:
    """The first ``limit`` workloads of the list ``params`` filters, in the page's order.

    The same visibility, filters and order as ``workload_page`` (an export never holds a row
    its pages could not show); no "who is ahead" (that is the page's, per row on screen).
    Loaded ``EXPORT_CHUNK`` rows at a time: a fixed number of queries per chunk.
    """
    filterset, rows = _filtered(viewer, params, fixed)
    sort = sort_key(params.get("sort"), params.getlist("state"))
    ids = list(_ordered_ids(rows, sort)[:limit]) if filterset.is_valid() else []
    total = rows.count() if len(ids) == limit else len(ids)
    redact = reason_redactor(viewer)
    out: list[WorkloadRow] = []
    for start in range(0, len(ids), EXPORT_CHUNK):
        chunk = ids[start : start + EXPORT_CHUNK]
        by_id = {w.id: w for w in attach_queue_positions(_base(viewer).filter(id__in=chunk))}
        out.extend(_row(by_id[i], redact) for i in chunk if i in by_id)
    return WorkloadExport(rows=out, total=total, sort=sort)


class _Counted:
    """Slices of ``ordered`` for the paginator, counted on ``plain`` (the same rows, fewer joins)."""

    ordered = True

    def __init__(self, rows: QuerySet, plain: QuerySet) -> None:
        self.rows, self.plain = rows, plain

    def count(self) -> int:
        return self.plain.count()

    def __getitem__(self, key: Any) -> Any:
        return self.rows[key]


def build_rows(
    viewer: Access, workloads: list[Workload], structure: ClusterStructure, *, ahead_shown: int = AHEAD_SHOWN
) -> list[WorkloadRow]:
    redact = reason_redactor(viewer)
    rows = [_row(workload, redact) for workload in workloads]
    pending = [(row, w) for row, w in zip(rows, workloads) if w.state == WorkloadState.PENDING and w.queue_position]
    if pending:
        _fill_ahead(viewer, pending, structure, ahead_shown)
    return rows


def _row(workload: Workload, redact: Callable[[str], str]) -> WorkloadRow:
    lq = workload.local_queue
    pending = workload.state == WorkloadState.PENDING
    return WorkloadRow(
        id=workload.id,
        namespace=workload.namespace.name,
        name=workload.name,
        local_queue=lq.name,
        cluster_queue=(workload.cluster_queue or lq.cluster_queue).name,
        state=workload.state,
        priority=workload.priority,
        requests=amounts(total_requests(workload.pod_sets or [])),
        queued_at=workload.queued_at,
        admitted_at=workload.admitted_at,
        finished_at=workload.finished_at,
        position=workload.queue_position if pending else None,
        reason_code=workload.pending_reason_code if pending else "",
        reason_title=title(workload.pending_reason_code) if pending else "",
        reason=redact(sentence(workload.pending_reason_code, workload.pending_reason_message)) if pending else "",
        wall_time_seconds=workload.total_wall_time_seconds(),
        evictions=workload.eviction_count,
        last_eviction=redact(workload.last_eviction_reason),
        shortages=reason_shortages(workload.pending_reason_shortages) if pending else [],
        position_state=workload.queue_position_state if pending else None,
        cluster=cluster_name(workload),
    )


def cluster_name(workload: Workload) -> str:
    """The cluster a workload runs or ran on, or whose job it was imported from ('' when none is
    recorded yet, or when the caller did not load it: never a query per row)."""
    if Workload.cluster.is_cached(workload) and workload.cluster is not None:
        return workload.cluster.name
    if Workload.cluster_job.is_cached(workload):
        job = getattr(workload, "cluster_job", None)
        if job is not None and job.cluster_id is not None:
            return job.cluster.name
    return ""


def _why(mode: str, same_queue: bool, their_score: float | None, own_score: float | None) -> str:
    if same_queue:
        return "higher priority or queued earlier in the same LocalQueue"
    if mode == engine.NO_FAIR_SHARING:
        return "higher priority or queued earlier (no admission fair sharing)"
    if mode == engine.DOMINANT_RESOURCE_SHARE:
        return "its queue holds a lower dominant share per unit of weight"
    if mode == engine.TIME_AWARE:
        return "its queue is further below its time-aware fair share"
    if their_score is not None and own_score is not None:
        return (
            f"its queue's usage score is {format_score(engine.USAGE_BASED, their_score)} "
            f"against {format_score(engine.USAGE_BASED, own_score)} for yours"
        )
    return "its queue ranks first by usage score"


def _fill_ahead(
    viewer: Access, pending: list[tuple[WorkloadRow, Workload]], structure: ClusterStructure, shown: int
) -> None:
    """For each pending row, the pending workloads ahead of it, counted per LocalQueue.

    From the stored queue order (one ``PendingOrder`` row per ClusterQueue): the ids ahead of
    the deepest row on the page, still pending, with their LocalQueue (one query), counted
    while walking each order once; then the LocalQueues found (one query).
    """
    cq_ids = sorted({w.local_queue.cluster_queue_id for _row, w in pending})
    orders = dict(
        PendingOrder.objects.filter(cluster_queue_id__in=cq_ids).values_list("cluster_queue_id", "workload_ids")
    )
    depth = dict.fromkeys(cq_ids, 0)
    for _row, w in pending:
        cq_id = w.local_queue.cluster_queue_id
        depth[cq_id] = max(depth[cq_id], w.queue_position - 1)  # type: ignore[operator]  # pending rows have one
    ahead_ids = [pk for cq_id in cq_ids for pk in (orders.get(cq_id) or [])[: depth[cq_id]]]
    queue_of = (
        dict(
            Workload.objects.filter(id__any_of=ahead_ids, state=WorkloadState.PENDING).values_list(
                "id", "local_queue_id"
            )
        )
        if ahead_ids
        else {}
    )
    # counts[index][local queue id]: pending ahead of row ``index`` in that LocalQueue
    counts: list[dict[int, int]] = [{} for _ in pending]
    for cq_id in cq_ids:
        rows_here = sorted(
            (w.queue_position, index)
            for index, (_row, w) in enumerate(pending)
            if w.local_queue.cluster_queue_id == cq_id
        )
        running: dict[int, int] = {}
        walked = 0
        order = orders.get(cq_id) or []
        for position, index in rows_here:
            while walked < min(position - 1, len(order)):  # type: ignore[operator]  # pending rows have a position
                lq_id = queue_of.get(order[walked])
                if lq_id is not None:
                    running[lq_id] = running.get(lq_id, 0) + 1
                walked += 1
            counts[index] = dict(running)
    found = {lq_id for per_row in counts for lq_id in per_row}
    groups: list[Any] = list(  # dicts that gain an ``ahead_<row>`` count each
        LocalQueue.objects.filter(id__in=found)
        .annotate(local_queue_id=F("id"), local_queue__name=F("name"), local_queue__weighted_share=F("weighted_share"))
        .values("local_queue_id", "local_queue__name", "namespace_id", "namespace__name", "local_queue__weighted_share")
        .order_by("namespace__name", "name")
    )
    for group in groups:
        for index, per_row in enumerate(counts):
            group[f"ahead_{index}"] = per_row.get(group["local_queue_id"], 0)
    for index, (row, workload) in enumerate(pending):
        mode = structure.cluster_queues[workload.local_queue.cluster_queue_id].effective_mode
        own_score = workload.local_queue.weighted_share
        items: list[AheadItem] = []
        hidden = 0
        for group in groups:
            count = group[f"ahead_{index}"]
            if not count:
                continue
            if not viewer.can_read_namespace(group["namespace_id"]):
                hidden += count
                continue
            same = group["local_queue_id"] == workload.local_queue_id
            items.append(
                AheadItem(
                    label="the same LocalQueue" if same else f"{group['namespace__name']}/{group['local_queue__name']}",
                    count=count,
                    why=_why(mode, same, group["local_queue__weighted_share"], own_score),
                    namespace=group["namespace__name"],
                    name=group["local_queue__name"],
                )
            )
        items.sort(key=lambda item: -item.count)
        if hidden:
            items.append(AheadItem(label=f"{OTHER_TENANT_QUEUE}s", count=hidden, why=_why(mode, False, None, None)))
        row.ahead = items[:shown]
        row.ahead_more = sum(item.count for item in items[shown:])


# --- one workload ---------------------------------------------------------------------------------


@dataclass
class WorkloadDetail:
    workload: Workload
    row: WorkloadRow
    pod_sets: list[dict[str, Any]]
    admissions: list[AdmissionRecord]
    assignment: list[tuple[str, str]]


def workload_detail(viewer: Access, namespace: str, name: str, structure: ClusterStructure) -> WorkloadDetail | None:
    """The workload if the viewer may read it (None: not found, or another tenant's)."""
    workload = _base(viewer).with_queue_position().filter(namespace__name=namespace, name=name).first()
    if workload is None:
        return None
    fill_estimated_positions([workload])
    row = build_rows(viewer, [workload], structure, ahead_shown=50)[0]
    pod_sets = [
        {"name": p["name"], "count": p["count"], "requests": amounts(p["requests"])} for p in (workload.pod_sets or [])
    ]
    admissions = list(
        AdmissionRecord.objects.filter(workload=workload).select_related("cluster_queue").order_by("-admitted_at")[:50]
    )
    redact = reason_redactor(viewer)
    for record in admissions:  # shown, never saved: an eviction's message may name another tenant's workload
        record.end_message = redact(record.end_message)
    return WorkloadDetail(
        workload=workload,
        row=row,
        pod_sets=pod_sets,
        admissions=admissions,
        assignment=sorted((workload.flavor_assignment or {}).items()),
    )


# --- dropdown filters ------------------------------------------------------------------------------


@dataclass
class FilterOptions:
    """The names a viewer may filter by (its own namespaces and their queues; admins: all)."""

    namespaces: list[str]
    local_queues: list[str]
    cluster_queues: list[str]
    reasons: list[tuple[str, str]]
    clusters: list[str]


def filter_options(viewer: Access) -> FilterOptions:
    """Two queries: the visible LocalQueues with their namespace and ClusterQueue names; the clusters' names."""
    rows = list(
        viewer.visible_to(LocalQueue.objects.all())
        .order_by("namespace__name", "name")
        .values_list("namespace__name", "name", "cluster_queue__name")
    )
    return FilterOptions(
        namespaces=sorted({namespace for namespace, _name, _cq in rows}),
        local_queues=[f"{namespace}/{name}" for namespace, name, _cq in rows],
        cluster_queues=sorted({cq for _ns, _name, cq in rows}),
        reasons=[(code, text) for code, text in TITLES.items() if code],
        clusters=list(Cluster.objects.order_by("name").values_list("name", flat=True)),  # every user reads names
    )
