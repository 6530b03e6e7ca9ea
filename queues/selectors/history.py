"""The usage time series (``UsageSample``) as chart-ready columns.

The sampler writes one row per queue per sample, all with the same ``sampled_at``, so rows of
several objects line up by time and can be summed. Old rows are hourly averages; both
resolutions read the same way. Every function here is one query; long ranges are thinned to at
most ``MAX_POINTS`` times so a chart never ships thousands of points.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Min, Q, Sum
from django.utils import timezone

from queues.models import UsageSample

RANGES: dict[str, timedelta] = {
    "6h": timedelta(hours=6),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}
DATA = "data"  # the default window: the span of the page's data, at most ``DATA_LIMIT``
DEFAULT_RANGE = DATA
DATA_LIMIT = RANGES["24h"]
CHOICES = [DATA, *RANGES]  # what the range picker offers, in its order
MIN_SPAN = timedelta(minutes=15)  # a page whose first sample is seconds old still gets a readable axis
MAX_POINTS = 400
# Interval of the wait and eviction buckets: the first whose window span is at most the key
# (a little above each range, so a window of 6 h 5 min still reads in quarters of an hour).
BUCKET_WIDTHS: tuple[tuple[timedelta, timedelta], ...] = (
    (timedelta(hours=8), timedelta(minutes=15)),
    (timedelta(hours=36), timedelta(hours=1)),
    (timedelta(days=10), timedelta(hours=6)),
)
WIDEST_BUCKET = timedelta(days=1)


def parse_range(value: str | None) -> str:
    """A known range name (``data``, ``6h``, ``24h``, ``7d``, ``30d``); anything else is ``data``."""
    return value if value == DATA or value in RANGES else DEFAULT_RANGE


@dataclass(frozen=True)
class Window:
    """The time range every time chart of one page shows, exactly ``[start, end]``.

    Invariants: ``end - start >= MIN_SPAN``; ``start`` is never before ``end`` minus the range
    asked for, nor before the page's first sample when there is one (charts start where the data
    starts), unless that sample is younger than ``MIN_SPAN``. ``data_start`` is that first sample
    when the window starts at it (None: the data goes back further, or there is none).
    """

    name: str
    start: datetime
    end: datetime
    data_start: datetime | None = None

    @property
    def span(self) -> timedelta:
        return self.end - self.start

    @property
    def bucket(self) -> timedelta:
        """The interval waits and evictions are grouped by: about 24 to 28 buckets a window."""
        return next((width for limit, width in BUCKET_WIDTHS if self.span <= limit), WIDEST_BUCKET)

    @property
    def label(self) -> str:
        """How card subtitles name the window: "last 6 h", "since 09:19 (6 h 12 min)" (today) or
        "since Nov 27 09:19 (1 d 6 h)"."""
        if self.data_start is not None and self.start == self.data_start:
            start, end = timezone.localtime(self.start), timezone.localtime(self.end)
            when = f"{start:%H:%M}" if start.date() == end.date() else f"{start:%b %-d %H:%M}"
            return f"since {when} ({_span_text(self.span)})"
        return f"last {_span_text(self.span)}"


def _span_text(span: timedelta) -> str:
    """``6 h 12 min``, ``24 h``, ``7 d``, ``2 d 3 h``: hours and minutes under two days."""
    minutes = round(span.total_seconds() / 60)
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        parts = [f"{hours} h" if hours else "", f"{minutes} min" if minutes else ""]
    else:
        days, hours = divmod(hours, 24)
        parts = [f"{days} d", f"{hours} h" if hours else ""]
    return " ".join(part for part in parts if part) or "0 min"


def fit_window(range_name: str | None, first: datetime | None, now: datetime) -> Window:
    """The window of a page whose data starts at ``first``: the range asked for (``data``, the
    default: at most ``DATA_LIMIT``) from ``now`` back, cut to start at ``first`` when the data
    starts later, and at least ``MIN_SPAN`` long. Pure: the one rule every dashboard page uses."""
    name = parse_range(range_name)
    start = now - RANGES.get(name, DATA_LIMIT)
    data_start = first if first is not None and first <= now else None
    # A first sample within 1% of the range's start is the range itself (samples are minutes apart).
    if data_start is not None and data_start > start + (now - start) / 100:
        start = min(data_start, now - MIN_SPAN)
    return Window(name, start, now, data_start if data_start is not None and data_start == start else None)


def window(range_name: str | None, now: datetime | None = None, first: datetime | None = None) -> Window:
    """The range asked for up to ``now``, not cut to any data (``page_window`` cuts it)."""
    return fit_window(range_name, first, now or timezone.now())


def page_window(range_name: str | None, targets: Iterable[tuple[str, int]], now: datetime | None = None) -> Window:
    """The one window of a page whose time charts draw the series of ``targets`` (``(kind,
    object id)`` pairs): from its first sample within the range asked for (one query) to now."""
    end = now or timezone.now()
    name = parse_range(range_name)
    first = first_sample_at(targets, end - RANGES.get(name, DATA_LIMIT))
    return fit_window(name, first, end)


def first_sample_at(targets: Iterable[tuple[str, int]], start: datetime) -> datetime | None:
    """The earliest sample of ``targets`` at or after ``start`` (one query on the series index)."""
    query = _targets_query(targets)
    if query is None:
        return None
    return UsageSample.objects.filter(query, sampled_at__gte=start).aggregate(first=Min("sampled_at"))["first"]


def _targets_query(targets: Iterable[tuple[str, int]]) -> Q | None:
    by_kind: dict[str, list[int]] = defaultdict(list)
    for kind, object_id in targets:
        by_kind[kind].append(object_id)
    if not by_kind:
        return None
    query = Q()
    for kind, ids in by_kind.items():
        query |= Q(kind=kind, object_id__in=ids)
    return query


@dataclass
class Series:
    """Columns over time; amounts in millis per resource, counts as integers."""

    times: list[datetime] = field(default_factory=list)
    allocated: dict[str, list[float]] = field(default_factory=dict)
    consumed: dict[str, list[float]] = field(default_factory=dict)
    capacity: dict[str, list[float]] = field(default_factory=dict)
    weighted_share: list[float | None] = field(default_factory=list)
    admitted: list[int] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.times)


def thin(times: list[datetime], limit: int = MAX_POINTS) -> set[datetime]:
    """At most ``limit`` evenly spread times, always keeping the last one."""
    if len(times) <= limit:
        return set(times)
    step = len(times) / limit
    kept = {times[int(i * step)] for i in range(limit)}
    kept.add(times[-1])
    return kept


def _columns(rows: list[tuple], resources_of: Iterable[str] = ()) -> Series:
    """Sum rows ``(sampled_at, allocated, consumed, capacity, weighted_share, admitted, pending)`` per time."""
    by_time: dict[datetime, list[tuple]] = defaultdict(list)
    for row in rows:
        by_time[row[0]].append(row)
    times = sorted(by_time)
    kept = thin(times)
    times = [t for t in times if t in kept]
    resources: set[str] = set(resources_of)
    for row in rows:
        resources.update((row[1] or {}).keys(), (row[2] or {}).keys(), (row[3] or {}).keys())
    series = Series(times=times)
    for name in ("allocated", "consumed", "capacity"):
        setattr(series, name, {resource: [0.0] * len(times) for resource in sorted(resources)})
    for index, moment in enumerate(times):
        admitted = pending = 0
        share: float | None = None
        for _at, allocated, consumed, capacity, weighted_share, admitted_count, pending_count in by_time[moment]:
            for column, amounts in (
                (series.allocated, allocated),
                (series.consumed, consumed),
                (series.capacity, capacity),
            ):
                for resource, amount in (amounts or {}).items():
                    column[resource][index] += float(amount)
            admitted += admitted_count
            pending += pending_count
            share = weighted_share if share is None else share
        series.admitted.append(admitted)
        series.pending.append(pending)
        series.weighted_share.append(share)
    for name in ("allocated", "consumed", "capacity"):
        column = getattr(series, name)
        setattr(series, name, {r: values for r, values in column.items() if any(values)})
    return series


_FIELDS = ("sampled_at", "allocated", "consumed", "capacity", "weighted_share", "admitted_count", "pending_count")


def object_series(kind: str, object_id: int, start: datetime) -> Series:
    """One queue's series from ``start`` (one query)."""
    rows = list(
        UsageSample.objects.filter(kind=kind, object_id=object_id, sampled_at__gte=start)
        .order_by("sampled_at")
        .values_list(*_FIELDS)
    )
    return _columns(rows)


def summed_series(targets: Iterable[tuple[str, int]], start: datetime) -> Series:
    """Several queues' series summed per sample time (one query), e.g. a tenant's namespaces or
    the cluster's roots (root cohorts and ClusterQueues outside any cohort)."""
    query = _targets_query(targets)
    if query is None:
        return Series()
    rows = list(UsageSample.objects.filter(query, sampled_at__gte=start).order_by("sampled_at").values_list(*_FIELDS))
    return _columns(rows)


def count_series(
    kind: str, start: datetime, object_ids: Iterable[int] | None = None
) -> tuple[list[datetime], list[int], list[int]]:
    """Admitted and pending workload counts summed per sample time, added up in SQL (one query)."""
    rows = UsageSample.objects.filter(kind=kind, sampled_at__gte=start)
    if object_ids is not None:
        rows = rows.filter(object_id__in=list(object_ids))
    grouped = list(
        rows.values("sampled_at")
        .annotate(admitted=Sum("admitted_count"), pending=Sum("pending_count"))
        .order_by("sampled_at")
    )
    kept = thin([row["sampled_at"] for row in grouped])
    grouped = [row for row in grouped if row["sampled_at"] in kept]
    return (
        [row["sampled_at"] for row in grouped],
        [int(row["admitted"] or 0) for row in grouped],
        [int(row["pending"] or 0) for row in grouped],
    )


def namespace_rows_at(times: Iterable[datetime], namespace_ids: Iterable[int] | None = None) -> list[tuple]:
    """``(sampled_at, namespace id, allocated, admitted, pending)`` of namespaces at given times (one query)."""
    moments = list(times)
    if not moments:
        return []
    # Only namespaces with work at that moment count towards fairness: skip idle ones in SQL.
    rows = UsageSample.objects.filter(kind=UsageSample.Kind.NAMESPACE, sampled_at__in=moments).filter(
        Q(admitted_count__gt=0) | Q(pending_count__gt=0)
    )
    if namespace_ids is not None:
        rows = rows.filter(object_id__in=list(namespace_ids))
    return list(rows.values_list("sampled_at", "object_id", "allocated", "admitted_count", "pending_count"))


def latest_sample_id() -> int:
    """Changes whenever the sampler writes: the key under which derived history may be cached."""
    return UsageSample.objects.order_by("-id").values_list("id", flat=True).first() or 0
