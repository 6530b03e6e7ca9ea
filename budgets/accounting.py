"""The ledger: budget charges derived from admission intervals, and sums over it.

Every admission of a workload is an ``AdmissionRecord`` interval ``[admitted_at, ended_at)``.
For each budget, an accounting run appends, per interval under the budget, the stretch that is
not charged yet: from where the interval's charges end (or its start, or the budget's anchor)
up to the interval's end or ``now``, cut at period boundaries. The charges of an interval
therefore tile it exactly, whatever happens in between: evictions and re-admissions are separate
intervals; a run that is late or skipped charges the gap next time; an interval whose end is
reported later than runs already charged past it gets a correction line crediting the excess.

Exactness: times are microseconds, quantities integer millis, sums ``numeric`` in PostgreSQL,
so a 10-minute job is exactly 600 seconds and nothing is rounded to hours.

The caller holds the budget's lock (``lock_budget``) inside a transaction, so two runs never
read the same charged-up-to point; the ledger's unique constraint is the last line of defence.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.db.models import BigIntegerField, CharField, Exists, F, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast

from budgets.models import Budget, BudgetCharge, BudgetState
from budgets.periods import Renewal
from budgets.status import Measurement, first_crossing, is_exhausted
from fairshare.usage import budgets as rules
from queues.locks import advisory_xact_lock
from queues.models import AdmissionRecord

_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class AccountingResult:
    budget_id: int
    lines: int
    corrections: int
    unit_seconds: Decimal  # net amount appended by this run


@dataclass(frozen=True, slots=True)
class Segment:
    """A stretch of the ledger: ``rate`` units per second over ``[start, end)``."""

    start: datetime
    end: datetime
    rate: Decimal


def lock_budget(budget_id: int) -> None:
    """Serialise accounting of one budget across processes (PostgreSQL advisory lock)."""
    advisory_xact_lock(f"budget:{budget_id}")


def exact_unit_seconds(quantity_millis: int, start: datetime, end: datetime) -> Decimal:
    """``quantity / 1000 x (end - start)`` in base-unit-seconds, exactly (9 decimal places)."""
    microseconds = (end - start) // _MICROSECOND
    return Decimal(f"{quantity_millis * microseconds}e-9")


def charge_quantity(budget: Budget, requests: dict[str, int], assignment: dict[str, str]) -> int:
    """Millis charged per second for an interval: 1000 for WallTime, else the request of the
    budget's resource (zero when the interval ran it on another flavor than the budget's)."""
    return rules.charge_quantity(
        budget.kind,
        requests,
        resource=budget.resource,
        flavor=budget.flavor.name if budget.flavor is not None else None,
        assignment=assignment,
    )


def records_under(budget: Budget) -> QuerySet[AdmissionRecord]:
    """Admission intervals that count against ``budget`` (its target; its resource and flavor)."""
    field, pk = budget.target_ref
    records = AdmissionRecord.objects.filter(**{f"{field}_id": pk})
    if budget.kind == Budget.Kind.RESOURCE_HOURS:
        records = records.annotate(
            charged_amount=Cast(KeyTextTransform(budget.resource, "requests"), BigIntegerField())
        ).filter(charged_amount__gt=0)
        if budget.flavor is not None:
            # Cast to text: a bare key transform compares as JSON, which SQLite refuses for a plain name.
            records = records.annotate(
                charged_flavor=Cast(KeyTextTransform(budget.resource, "assignment"), CharField())
            ).filter(charged_flavor=budget.flavor.name)
    return records


def _unsettled(budget: Budget, now: datetime) -> QuerySet[AdmissionRecord]:
    """Intervals with something left to charge or correct.

    Settled means: closed, and either charged exactly up to its end or already corrected
    (a correction only happens once the end is known, and brings the charges back to it).
    """
    lines = BudgetCharge.objects.filter(budget_id=budget.pk, admission_record_id=OuterRef("pk"))
    # A closed interval with nothing after the anchor needs a look only if a run charged it
    # while it was open (its end, reported later, may even equal its start).
    has_time = Q(ended_at__gt=budget.anchor) & Q(ended_at__gt=F("admitted_at"))
    return (
        records_under(budget)
        .filter(admitted_at__lt=now)
        # An open interval is charged once its workload runs: on a cluster whose start is reported
        # later (Slurm) the interval moves to that start first (``record_starts``), so an admission
        # whose release waits (a cluster down) is not charged for the wait. Once it ends, all of it is.
        .filter(Q(ended_at__isnull=False) | Q(workload__started_at__isnull=False))
        .filter(Q(ended_at__isnull=True) | has_time | Exists(lines))
        .filter(
            ~Exists(lines.filter(kind=BudgetCharge.Kind.CHARGE, charged_to=OuterRef("ended_at"))),
            ~Exists(lines.filter(kind=BudgetCharge.Kind.CORRECTION)),
        )
        .annotate(
            charged_until=Subquery(
                lines.filter(kind=BudgetCharge.Kind.CHARGE).order_by("-charged_to").values("charged_to")[:1]
            )
        )
        .order_by("id")
    )


def charge_budget(budget: Budget, now: datetime) -> AccountingResult:
    """Append what is not yet charged for ``budget`` up to ``now``; run under ``lock_budget``."""
    rule = budget.renewal_rule()
    new_lines: list[BudgetCharge] = []
    corrections = 0
    total = Decimal(0)
    for record in _unsettled(budget, now).iterator(chunk_size=2000):
        quantity = charge_quantity(budget, record.requests or {}, record.assignment or {})
        if quantity <= 0:
            continue
        start = max(record.admitted_at, budget.anchor)
        charged_until = record.charged_until or start  # type: ignore[attr-defined]  # annotated by the query above
        end = min(record.ended_at, now) if record.ended_at is not None else now
        if end > charged_until:
            lines = _lines(budget, record, rule, quantity, charged_until, end, BudgetCharge.Kind.CHARGE)
        elif end < charged_until and record.ended_at is not None:
            # Charged past the real end (the end was written later, with an earlier time): credit it back.
            lines = _lines(budget, record, rule, quantity, end, charged_until, BudgetCharge.Kind.CORRECTION)
            corrections += len(lines)
        else:
            continue  # open and charged up to now (or a clock behind the last run's): nothing to add
        new_lines.extend(lines)
        total += sum((line.unit_seconds for line in lines), Decimal(0))
    BudgetCharge.objects.bulk_create(new_lines, batch_size=1000)
    return AccountingResult(budget.pk, len(new_lines), corrections, total)


def _lines(
    budget: Budget,
    record: AdmissionRecord,
    rule: Renewal,
    quantity: int,
    start: datetime,
    end: datetime,
    kind: str,
) -> list[BudgetCharge]:
    """``[start, end)`` as ledger lines, one per period it touches."""
    sign = 1 if kind == BudgetCharge.Kind.CHARGE else -1
    return [
        BudgetCharge(
            budget_id=budget.pk,
            workload_id=record.workload_id,
            admission_record_id=record.pk,
            kind=kind,
            period_start=period.start,
            charged_from=piece_start,
            charged_to=piece_end,
            quantity=quantity,
            unit_seconds=sign * exact_unit_seconds(quantity, piece_start, piece_end),
        )
        for period, piece_start, piece_end in rule.split(start, end)
    ]


# --- sums over the ledger ----------------------------------------------------------------------


def _clip(line_from: datetime, line_to: datetime, amount: Decimal, start: datetime, end: datetime | None) -> Decimal:
    """The part of a line inside ``[start, end)``; a line's amount is spread evenly over it."""
    low = max(line_from, start)
    high = line_to if end is None else min(line_to, end)
    if high <= low:
        return Decimal(0)
    return amount * Decimal((high - low) // _MICROSECOND) / Decimal((line_to - line_from) // _MICROSECOND)


def _window(budget_id: int, start: datetime, end: datetime | None) -> tuple[QuerySet, QuerySet]:
    """Lines wholly inside ``[start, end)`` and lines that straddle one of its edges.

    Lines are cut at the period boundaries in force when they were written, so straddlers only
    appear for windows that are not periods (the burn-rate window) or after a renewal change.
    """
    touching = BudgetCharge.objects.filter(budget_id=budget_id, charged_to__gt=start)
    if end is not None:
        touching = touching.filter(charged_from__lt=end)
    edges = Q(charged_from__lt=start) if end is None else Q(charged_from__lt=start) | Q(charged_to__gt=end)
    return touching.exclude(edges), touching.filter(edges)


def used_between(budget_id: int, start: datetime, end: datetime | None) -> Decimal:
    """Net unit-seconds charged for time inside ``[start, end)`` (two queries)."""
    inside, straddling = _window(budget_id, start, end)
    total = inside.aggregate(total=Sum("unit_seconds"))["total"] or Decimal(0)
    for line_from, line_to, amount in straddling.values_list("charged_from", "charged_to", "unit_seconds"):
        total += _clip(line_from, line_to, amount, start, end)
    return total


def used_by_workload(budget_id: int, start: datetime, end: datetime | None) -> dict[int, Decimal]:
    """Net unit-seconds per workload id for time inside ``[start, end)``."""
    inside, straddling = _window(budget_id, start, end)
    totals: dict[int, Decimal] = defaultdict(Decimal)
    for row in inside.values("workload_id").annotate(total=Sum("unit_seconds")):
        totals[row["workload_id"]] += row["total"]
    for workload_id, line_from, line_to, amount in straddling.values_list(
        "workload_id", "charged_from", "charged_to", "unit_seconds"
    ):
        totals[workload_id] += _clip(line_from, line_to, amount, start, end)
    return dict(totals)


def segments(budget_id: int, start: datetime, end: datetime | None) -> list[Segment]:
    """The ledger inside ``[start, end)`` as constant-rate stretches (for curves and crossings)."""
    rows = BudgetCharge.objects.filter(budget_id=budget_id, charged_to__gt=start)
    if end is not None:
        rows = rows.filter(charged_from__lt=end)
    result = []
    for line_from, line_to, amount in rows.values_list("charged_from", "charged_to", "unit_seconds").iterator(
        chunk_size=5000
    ):
        seconds = Decimal((line_to - line_from) // _MICROSECOND) / Decimal(1_000_000)
        low, high = max(line_from, start), line_to if end is None else min(line_to, end)
        if high > low:
            result.append(Segment(low, high, amount / seconds))
    return result


RATE_PLACES = Decimal("0.000000001")  # ``BudgetState.burn_rate``'s nine decimal places


def burn_window(period_start: datetime, as_of: datetime, window_seconds: int) -> tuple[datetime, datetime]:
    """The burn-rate window ``[start, as_of)``: the last ``window_seconds`` before the measurement,
    cut at the start of the period (a new period's rate is over its own time only)."""
    return max(period_start, as_of - timedelta(seconds=window_seconds)), as_of


def burn_rate(charged_unit_seconds: Decimal, start: datetime, end: datetime) -> Decimal:
    """Unit-seconds charged for time inside ``[start, end)`` per second of it, to the nine
    decimal places ``BudgetState`` stores (so the status computed in a run and the one read back
    from its state are the same); 0 for an empty window."""
    window_micro = (end - start) // _MICROSECOND
    if window_micro <= 0:
        return Decimal(0)
    rate = charged_unit_seconds * Decimal(1_000_000) / Decimal(window_micro)
    return rate.quantize(RATE_PLACES)


def measure(
    budget: Budget, now: datetime, *, burn_window_seconds: int, previous: BudgetState | None
) -> Measurement | None:
    """Used, burn rate and exhaustion time of the period containing ``now`` (None before the anchor).

    Everything is as of ``now``, the moment this run charged the ledger up to: the burn rate is
    the net amount the ledger charged for time inside ``burn_window`` (the last
    ``burn_window_seconds``, cut at the period start) divided by that window's length
    (``burn_rate``), the usage the period's net charges up to ``now``; so while the charges go
    on at a steady rate, the forecast ``now + remaining / rate`` is the same instant at every run.
    The exhaustion time is found once (by a sweep over the period's ledger) and kept while the
    period and the allocation stay the same.
    """
    if now < budget.anchor:
        return None
    period = budget.renewal_rule().period_at(now)
    used = used_between(budget.pk, period.start, period.end)
    window_start, window_end = burn_window(period.start, now, burn_window_seconds)
    rate = burn_rate(used_between(budget.pk, window_start, window_end), window_start, window_end)
    exhausted_at = None
    if is_exhausted(used, budget.allocated_hours):
        unchanged = (
            previous is not None
            and previous.exhausted_at is not None
            and previous.period_start == period.start
            and previous.allocated_hours == budget.allocated_hours
        )
        if unchanged:
            exhausted_at = previous.exhausted_at  # type: ignore[union-attr]
        else:
            stretches = ((s.start, s.end, s.rate) for s in segments(budget.pk, period.start, period.end))
            exhausted_at = first_crossing(stretches, budget.allocated_hours * 3600) or now
    return Measurement(
        as_of=now,
        period_start=period.start,
        period_end=period.end,
        used=used,
        burn_rate=rate,
        exhausted_at=exhausted_at,
    )
