"""Side-by-side comparison of two simulator results (baseline and edited): pure functions.

Input is the simulator's JSON (docs/design.md contract); output is a compact JSON "view" the run
page, the API and the exports read, so a finished run never re-reads the full results to draw
itself. Nothing here touches Django (``budgets.status`` is pure too: the one forecast).

Definitions the page states next to the figures:

* A workload's *start* is its first admission (events), so a workload preempted later still
  counts as started when it first ran. *Moved* compares starts: negative = earlier when edited.
* *Wait* is the simulator's ``waitSeconds`` (all pending time, across evictions; pending work
  counts its wait up to the end). Tenants are namespaces.
* *Utilisation over time* is the admitted amount over the nominal capacity of the scenario.
* Every headline figure says what it is over (``scope``): the whole run (``run``: averaged over
  its ``endSeconds``), the workloads submitted in it (``submitted``), or its end (``end``).
* *While contended* (``contention``, the simulator's ``summary.contention``): a resource is
  contended while a workload requesting it is still pending after the admission passes of the
  moment, in a LocalQueue neither stopped nor held (it could not be admitted: no quota, or not
  its turn). Utilisation of a resource while contended is its allocation averaged over the
  times it was contended alone; waits while contended are the waits of the workloads submitted
  while some resource was (``[start, end)``: a workload that had to wait opens one).
* *Per cluster* (``clusters``, when the scenario lists clusters: the simulator's
  ``summary.clusters``): each cluster's capacity is the nominal quota on its flavors (the edits
  may move flavors and quotas, so each side has its own), utilisation the allocation on its
  flavors averaged over the run over that capacity, admitted the workloads admitted onto it at
  least once, waits those of the workloads whose last admission placed them on it.
* *Budgets* are compared in the replay's own time base, seconds from its start (and the
  calendar time of that start when the scenario has one): both sides are replay figures, an
  exhaustion inside the replay or a forecast at the end-of-replay burn rate, never mixed with
  today's live forecast (which the page shows apart, as the budget pages compute it).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from budgets.status import SECONDS_PER_HOUR, forecast

Result = Mapping[str, Any]

MAX_SERIES_POINTS = 400
MAX_MOVED_ROWS = 200
SIDES = ("baseline", "edited")


# --- small statistics ---------------------------------------------------------------------


def nearest_rank(ordered: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of sorted values (the simulator's definition); 0 for none."""
    if not ordered:
        return 0.0
    return float(ordered[max(0, math.ceil(p * len(ordered)) - 1)])


def distribution(values: Iterable[float]) -> dict[str, float | int]:
    """Count, mean and the five numbers of a box plot (whiskers min..max), plus p95."""
    ordered = sorted(float(v) for v in values)
    if not ordered:
        return {"count": 0, "mean": 0.0, "min": 0.0, "q1": 0.0, "median": 0.0, "q3": 0.0, "p95": 0.0, "max": 0.0}
    return {
        "count": len(ordered),
        "mean": round(sum(ordered) / len(ordered), 3),
        "min": ordered[0],
        "q1": nearest_rank(ordered, 0.25),
        "median": nearest_rank(ordered, 0.50),
        "q3": nearest_rank(ordered, 0.75),
        "p95": nearest_rank(ordered, 0.95),
        "max": ordered[-1],
    }


def tenant_of(local_queue: str) -> str:
    return local_queue.split("/", 1)[0]


# --- starts and moves ---------------------------------------------------------------------


def first_starts(result: Result) -> dict[str, float]:
    """Each workload's first admission time."""
    starts: dict[str, float] = {}
    for event in result.get("events", ()):
        if event["type"] == "admitted" and event["workload"] not in starts:
            starts[event["workload"]] = event["t"]
    return starts


def workload_moves(baseline: Result, edited: Result) -> list[dict[str, Any]]:
    """One row per workload: its start in both runs and the difference (edited - baseline).

    ``delta`` is None when it started in only one run (or neither); rows are in workload name
    order so two exports of the same run are identical.
    """
    starts = {"baseline": first_starts(baseline), "edited": first_starts(edited)}
    rows = []
    workloads = baseline.get("workloads", {})
    edited_workloads = edited.get("workloads", {})
    for name in sorted(set(workloads) | set(edited_workloads)):
        entry = workloads.get(name) or edited_workloads[name]
        before, after = starts["baseline"].get(name), starts["edited"].get(name)
        rows.append(
            {
                "workload": name,
                "localQueue": entry.get("localQueue"),
                "tenant": tenant_of(entry.get("localQueue") or ""),
                "submitAt": entry.get("submitAt"),
                "baselineStart": before,
                "editedStart": after,
                "delta": None if before is None or after is None else _num(after - before),
                "baselineWait": (workloads.get(name) or {}).get("waitSeconds"),
                "editedWait": (edited_workloads.get(name) or {}).get("waitSeconds"),
                "baselineState": (workloads.get(name) or {}).get("state"),
                "editedState": (edited_workloads.get(name) or {}).get("state"),
            }
        )
    return rows


def moved_summary(rows: Sequence[Mapping[str, Any]], limit: int = MAX_MOVED_ROWS) -> dict[str, Any]:
    """Counts of earlier/later/same/only-one-side starts, and the rows that moved most."""
    counts = {"earlier": 0, "later": 0, "same": 0, "onlyBaseline": 0, "onlyEdited": 0, "neither": 0}
    moved = []
    for row in rows:
        before, after, delta = row["baselineStart"], row["editedStart"], row["delta"]
        if delta is not None:
            key = "earlier" if delta < 0 else "later" if delta > 0 else "same"
            counts[key] += 1
            if delta:
                moved.append(row)
        elif before is not None:
            counts["onlyBaseline"] += 1
            moved.append(row)
        elif after is not None:
            counts["onlyEdited"] += 1
            moved.append(row)
        else:
            counts["neither"] += 1
    # Never-started-on-one-side first (the biggest change), then by how far the start moved.
    moved.sort(key=lambda r: (r["delta"] is not None, -abs(r["delta"] or 0), r["workload"]))
    deltas = [row["delta"] for row in rows if row["delta"] is not None]
    return {
        "counts": counts,
        "meanDelta": round(sum(deltas) / len(deltas), 3) if deltas else 0.0,
        "rows": [dict(row) for row in moved[:limit]],
        "truncated": max(0, len(moved) - limit),
    }


# --- budgets ------------------------------------------------------------------------------


def budget_exhaustion(result: Result) -> dict[str, float]:
    """When each budget (by its label) was exhausted in a run."""
    times: dict[str, float] = {}
    for event in result.get("events", ()):
        if event["type"] == "held" and "budget" in event:
            times.setdefault(event["budget"], event["t"])
    return times


def forecast_after_end(result: Result, label: str) -> float | None:
    """Seconds from the start of a run until a budget not exhausted by its end would run out at
    its end-of-run burn rate: ``budgets.status.forecast``, the live pages' computation (None:
    nothing burns at the end, or a decade away)."""
    entry = next((b for b in result.get("summary", {}).get("budgets", ()) if b.get("budget") == label), None)
    end = result.get("summary", {}).get("endSeconds")
    if entry is None or end is None or entry.get("burnRatePerHour") is None:
        return None
    epoch = datetime(2000, 1, 1, tzinfo=UTC)
    as_of = epoch + timedelta(seconds=float(end))
    moment = forecast(
        as_of,
        Decimal(str(entry["usedHours"])) * SECONDS_PER_HOUR,
        Decimal(str(entry["allocatedHours"])),
        # units per hour of time = unit-seconds per second, the rate ``forecast`` takes
        Decimal(str(entry["burnRatePerHour"])),
    )
    return None if moment is None else _num((moment - epoch).total_seconds())


def _budget_side(exhausted_at: float | None, forecast_at: float | None, end: float | None) -> dict[str, Any]:
    """One side of a budget row in the replay's time base: ``exhausted`` (inside the replay, at
    ``at``), ``forecast`` (not inside it; at its end-of-replay rate it runs out at ``at``), or
    ``never`` (not inside it, and nothing burns at its end)."""
    if exhausted_at is not None:
        return {"outcome": "exhausted", "at": exhausted_at, "end": end}
    if forecast_at is not None:
        return {"outcome": "forecast", "at": forecast_at, "end": end}
    return {"outcome": "never", "at": None, "end": end}


def budget_rows(labels: Sequence[str], baseline: Result, edited: Result) -> list[dict[str, Any]]:
    """Exhaustion time of each budget in both runs; None = not exhausted within the run. A budget
    still running at the end gets its forecast (``forecast_after_end``), so "not exhausted in
    the replay" never reads as "never runs out".

    Both sides are in the same time base (seconds from the replay's start), so a row compares
    like with like; ``shift`` is edited minus baseline of whatever each side's ``at`` is (and
    ``shiftKind`` says whether either is a forecast)."""
    before, after = budget_exhaustion(baseline), budget_exhaustion(edited)
    ends = [result.get("summary", {}).get("endSeconds") for result in (baseline, edited)]
    rows = []
    for label in list(labels) + sorted((set(before) | set(after)) - set(labels)):
        b, a = before.get(label), after.get(label)
        b_forecast = forecast_after_end(baseline, label) if b is None else None
        a_forecast = forecast_after_end(edited, label) if a is None else None
        sides = {
            "baselineSide": _budget_side(b, b_forecast, ends[0]),
            "editedSide": _budget_side(a, a_forecast, ends[1]),
        }
        b_at, a_at = sides["baselineSide"]["at"], sides["editedSide"]["at"]
        shift = None if a_at is None or b_at is None else _num(a_at - b_at)
        rows.append(
            {
                "budget": label,
                "baseline": b,
                "edited": a,
                "delta": None if a is None or b is None else _num(a - b),
                "baselineForecast": b_forecast,
                "editedForecast": a_forecast,
                **sides,
                "shift": shift,
                "shiftKind": None if shift is None else ("replay" if b is not None and a is not None else "forecast"),
            }
        )
    return rows


# --- waits per tenant and per LocalQueue -------------------------------------------------------


def tenant_waits(result: Result) -> dict[str, dict[str, float | int]]:
    """Distribution of waits per tenant (namespace) over every submitted workload."""
    waits: dict[str, list[float]] = defaultdict(list)
    for entry in result.get("workloads", {}).values():
        if entry.get("waitSeconds") is not None:
            waits[tenant_of(entry["localQueue"])].append(entry["waitSeconds"])
    return {tenant: distribution(values) for tenant, values in sorted(waits.items())}


def local_queue_rows(baseline: Result, edited: Result) -> list[dict[str, Any]]:
    per = {side: result["summary"].get("perLocalQueue", {}) for side, result in zip(SIDES, (baseline, edited))}
    rows = []
    for key in sorted(set(per["baseline"]) | set(per["edited"])):
        rows.append({"localQueue": key, "tenant": tenant_of(key), **{side: per[side].get(key) for side in SIDES}})
    return rows


# --- while contended ------------------------------------------------------------------------


def contention(result: Result) -> dict[str, Any]:
    """The run's contended intervals as the simulator reports them (``summary.contention``) and
    the figures over them: how long (and what fraction of the run), utilisation over them alone,
    and the waits of the workloads submitted inside one. Empty figures for a result without
    them (a run stored before the simulator reported contention)."""
    summary = result.get("summary", {})
    reported = summary.get("contention")
    if reported is None:
        return {"available": False}
    intervals = [(float(start), float(end)) for start, end in reported.get("intervals", ())]
    starts = [start for start, _ in intervals]
    waits = []
    for entry in result.get("workloads", {}).values():
        wait, submitted = entry.get("waitSeconds"), entry.get("submitAt")
        if wait is None or submitted is None:
            continue
        index = bisect_right(starts, float(submitted)) - 1
        if index >= 0 and intervals[index][0] <= float(submitted) < intervals[index][1]:
            waits.append(float(wait))
    ordered = sorted(waits)
    end = summary.get("endSeconds") or 0
    seconds = float(reported.get("seconds", 0))
    return {
        "available": True,
        "seconds": _num(seconds),
        "fraction": round(seconds / float(end), 6) if end else 0.0,
        "intervals": len(intervals),
        "utilization": {resource: row["utilization"] for resource, row in reported.get("resources", {}).items()},
        "resourceSeconds": {resource: row["seconds"] for resource, row in reported.get("resources", {}).items()},
        "waitSeconds": {  # None: no workload was submitted while contended
            "count": len(ordered),
            "p50": _num(nearest_rank(ordered, 0.50)) if ordered else None,
            "p95": _num(nearest_rank(ordered, 0.95)) if ordered else None,
        },
    }


# --- series -------------------------------------------------------------------------------


def stride_indices(length: int, max_points: int = MAX_SERIES_POINTS) -> list[int]:
    """Evenly spaced indices keeping the first and last point."""
    if length <= max_points:
        return list(range(length))
    step = (length - 1) / (max_points - 1)
    return sorted({round(i * step) for i in range(max_points)})


def _pick(values: Sequence[Any], indices: Sequence[int]) -> list[Any]:
    return [values[i] for i in indices]


def chart_series(result: Result, capacity: Mapping[str, float], max_points: int = MAX_SERIES_POINTS) -> dict[str, Any]:
    """The series the charts draw, thinned to ``max_points``: allocation, decayed usage and fair
    share per LocalQueue and resource, and utilisation (sum of allocations / capacity)."""
    series = result.get("series", {})
    times = series.get("t", [])
    indices = stride_indices(len(times), max_points)

    def thin(block: Mapping[str, Mapping[str, Sequence[float]]]) -> dict[str, dict[str, list[float]]]:
        return {
            key: {resource: _pick(values, indices) for resource, values in sorted(per.items())}
            for key, per in sorted(block.items())
        }

    allocation = series.get("allocation", {})
    totals: dict[str, list[float]] = {}
    for per in allocation.values():
        for resource, values in per.items():
            column = totals.setdefault(resource, [0.0] * len(times))
            for i, value in enumerate(values):
                column[i] += value
    utilization = {
        resource: [round(v / capacity[resource], 6) for v in _pick(column, indices)]
        for resource, column in sorted(totals.items())
        if capacity.get(resource)
    }
    return {
        "t": _pick(times, indices),
        "allocation": thin(allocation),
        "usage": thin(series.get("usage", {})),
        "fairShare": thin(series.get("fairShare", {})),
        "utilization": utilization,
    }


# --- headline figures -------------------------------------------------------------------------


# Differences smaller than these are noise, not a verdict: a tenth of a percentage point of a
# ratio, a thousandth of Jain's index, a minute (or 1%) of a wait. Counts are exact.
NOISE = {"ratio": 0.001, "index": 0.001, "seconds": 60.0}
NOISE_RELATIVE = 0.01


def within_noise(before: float | None, after: float | None, unit: str) -> bool:
    """Whether a change is too small to call better or worse (and to show as one)."""
    if before is None or after is None:
        return True
    delta = abs(float(after) - float(before))
    floor = NOISE.get(unit, 0.0)
    if unit == "seconds":
        floor = max(floor, NOISE_RELATIVE * abs(float(before)))
    return delta <= floor if floor else delta == 0


def _kpi(
    key: str,
    label: str,
    before: float | None,
    after: float | None,
    better: str | None,
    unit: str = "",
    *,
    scope: str = "run",
) -> dict[str, Any]:
    delta = None if before is None or after is None else _num(after - before)
    noise = within_noise(before, after, unit)
    verdict = None
    if delta and better and not noise:
        verdict = "better" if (delta > 0) == (better == "higher") else "worse"
    return {
        "key": key,
        "label": label,
        "baseline": before,
        "edited": after,
        "delta": delta,
        "unit": unit,
        "better": better,
        "verdict": verdict,
        "noise": noise,
        "scope": scope,
    }


def censored(result: Result) -> int:
    """Workloads still pending at the end of a run: their wait is cut off by the horizon, so it
    is a lower bound (censored), not a measured wait."""
    return sum(1 for entry in result.get("workloads", {}).values() if entry.get("state") == "Pending")


def _while_contended(row: dict[str, Any], before: float | None, after: float | None) -> dict[str, Any]:
    """A headline row's figure over the contended intervals, beside the whole-run one."""
    inner = _kpi(
        row["key"] + ".contended", row["label"] + " while contended", before, after, row["better"], row["unit"]
    )
    return {key: inner[key] for key in ("baseline", "edited", "delta", "verdict", "noise")}


def kpis(
    baseline: Result, edited: Result, budgets: Sequence[Mapping[str, Any]], contended: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The headline numbers, with which direction is better and what each is over (``scope``:
    ``run`` averaged over the whole run, ``submitted`` over every workload submitted in it,
    ``end`` at its end). Utilisation and waits also carry ``contended``: the same figure over
    the contended intervals only (``contention``), when both sides report them."""
    b, e = baseline["summary"], edited["summary"]
    contended = contended or {side: contention(result) for side, result in zip(SIDES, (baseline, edited))}
    both = all(contended.get(side, {}).get("available") for side in SIDES)
    rows = [_kpi("jainIndex", "Jain fairness index", b["jainIndex"], e["jainIndex"], "higher", "index")]
    for resource in sorted(set(b["utilization"]) | set(e["utilization"])):
        row = _kpi(
            f"utilization.{resource}",
            f"Utilisation {resource}",
            b["utilization"].get(resource),
            e["utilization"].get(resource),
            "higher",
            "ratio",
        )
        if both:
            row["contended"] = _while_contended(
                row,
                contended["baseline"]["utilization"].get(resource),
                contended["edited"]["utilization"].get(resource),
            )
        rows.append(row)
    cut = {"baseline": censored(baseline), "edited": censored(edited)}
    for key, label in (("p50", "Wait p50"), ("p95", "Wait p95")):
        row = _kpi(
            f"wait.{key}", label, b["waitSeconds"][key], e["waitSeconds"][key], "lower", "seconds", scope="submitted"
        )
        row["censored"] = cut  # the waits include these still-pending workloads' time so far
        if both:
            row["contended"] = _while_contended(
                row, contended["baseline"]["waitSeconds"][key], contended["edited"]["waitSeconds"][key]
            )
        rows.append(row)
    rows.append(
        _kpi(
            "finished",
            "Workloads finished",
            b["workloads"]["finished"],
            e["workloads"]["finished"],
            "higher",
            scope="end",
        )
    )
    rows.append(
        _kpi(
            "pending",
            "Still pending at the end",
            b["workloads"]["pending"],
            e["workloads"]["pending"],
            "lower",
            scope="end",
        )
    )
    rows.append(_kpi("evictions", "Evictions", b["evictions"], e["evictions"], "lower"))
    exhausted = [sum(row[side] is not None for row in budgets) for side in SIDES]
    if budgets:
        rows.append(_kpi("budgetsExhausted", "Budgets exhausted", exhausted[0], exhausted[1], None))
    return rows


# At which level each admission mode acts (docs/history-replay.md): one sentence each, shown
# under the verdict of a run whose baseline or edited side uses the mode.
MODE_LEVELS = {
    "NoAdmissionFairSharing": "FIFO acts on no level: priority, then queue timestamp, so a light user waits behind "
    "every older job of every heavy user.",
    "UsageBasedAdmissionFairSharing": "UsageBased acts on decayed past usage (half-life usageHalfLifeTime): a user "
    "who ran little recently goes first even when the heavy users have nothing "
    "running, so it cuts light users' waits the most.",
    "DominantResourceShare": "DominantResourceShare acts on the current allocation only (KEP-752, no memory): it "
    "helps a light user only against users holding resources now; against idle users "
    "with a backlog it ties at share 0 and falls back to FIFO.",
    "TimeAware": "TimeAware acts on the allocation against a fair share shaped by windowed usage (KAI); queues at "
    "the same ratio (for example all idle ones) are ordered by their windowed usage, so light users "
    "go first within the usage window and FIFO returns once the window forgets.",
}


def admission_modes(scenario: Any) -> list[str]:
    """The admission modes a parsed scenario's ClusterQueues and cohorts set (none set: FIFO)."""
    modes = {owner.admission_mode for owner in (*scenario.cluster_queues, *scenario.cohorts) if owner.admission_mode}
    return sorted(modes) or ["NoAdmissionFairSharing"]


def mode_levels(baseline_modes: Sequence[str], edited_modes: Sequence[str]) -> list[dict[str, Any]]:
    """One row per mode either side uses: which sides, and the sentence of ``MODE_LEVELS``."""
    rows = []
    for mode in sorted(set(baseline_modes) | set(edited_modes)):
        rows.append(
            {
                "mode": mode,
                "baseline": mode in baseline_modes,
                "edited": mode in edited_modes,
                "level": MODE_LEVELS.get(mode, ""),
            }
        )
    return rows


def cluster_rows(baseline: Result, edited: Result) -> list[dict[str, Any]]:
    """One row per cluster either side reports (baseline order, then the edited side's new
    ones): each side's flavors, capacity and unavailable seconds, and headline figures
    (``_kpi``) with what each is over: ``run`` (utilisation), ``admitted``, ``placed`` (waits)."""
    before = baseline["summary"].get("clusters") or {}
    after = edited["summary"].get("clusters") or {}
    rows = []
    for name in [*before, *(n for n in after if n not in before)]:
        b, e = before.get(name) or {}, after.get(name) or {}
        b_use, e_use = b.get("utilization") or {}, e.get("utilization") or {}
        figures = [
            _kpi(f"clusters.{name}.utilization.{r}", f"Utilisation {r}", b_use.get(r), e_use.get(r), "higher", "ratio")
            for r in sorted(set(b_use) | set(e_use))
        ]
        figures.append(
            _kpi(f"clusters.{name}.admitted", "Admitted", b.get("admitted"), e.get("admitted"), None, scope="admitted")
        )
        for key, label in (("p50", "Wait p50"), ("p95", "Wait p95")):
            figures.append(
                _kpi(
                    f"clusters.{name}.wait.{key}",
                    label,
                    (b.get("waitSeconds") or {}).get(key),
                    (e.get("waitSeconds") or {}).get(key),
                    "lower",
                    "seconds",
                    scope="placed",
                )
            )
        rows.append(
            {
                "cluster": name,
                "flavors": {"baseline": b.get("flavors"), "edited": e.get("flavors")},
                "capacity": {"baseline": b.get("capacity"), "edited": e.get("capacity")},
                "unavailableSeconds": {"baseline": b.get("unavailableSeconds"), "edited": e.get("unavailableSeconds")},
                "kpis": figures,
            }
        )
    return rows


def compare(
    baseline: Result,
    edited: Result,
    *,
    capacity: Mapping[str, float],
    budget_labels: Sequence[str] = (),
    max_points: int = MAX_SERIES_POINTS,
    modes: tuple[Sequence[str], Sequence[str]] | None = None,
    clock_start: datetime | None = None,
    edited_capacity: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The comparison view: headline figures, per-tenant waits, per-LocalQueue summaries,
    per-cluster figures (``cluster_rows``), budgets, moved workloads and the thinned series of both runs.

    ``capacity`` is the scenario's nominal capacity per resource in base units (cores, GPUs),
    ``edited_capacity`` the edited scenario's when the edits change quotas (each side's
    utilisation over time is over its own capacity, as its headline figure is);
    ``clock_start`` the calendar moment of t=0, when the scenario has one (``clockStart``: the
    page turns replay times into dates with it).
    """
    budgets = budget_rows(budget_labels, baseline, edited)
    tenants_before, tenants_after = tenant_waits(baseline), tenant_waits(edited)
    contended = {side: contention(result) for side, result in zip(SIDES, (baseline, edited))}
    return {
        "kpis": kpis(baseline, edited, budgets, contended),
        "contention": contended,
        "clockStart": clock_start.isoformat() if clock_start is not None else None,
        "utilization": {
            side: dict(result["summary"]["utilization"]) for side, result in zip(SIDES, (baseline, edited))
        },
        "tenants": [
            {"tenant": tenant, "baseline": tenants_before.get(tenant), "edited": tenants_after.get(tenant)}
            for tenant in sorted(set(tenants_before) | set(tenants_after))
        ],
        "localQueues": local_queue_rows(baseline, edited),
        "clusters": cluster_rows(baseline, edited),
        "budgets": budgets,
        "moved": moved_summary(workload_moves(baseline, edited)),
        "series": {
            "baseline": chart_series(baseline, capacity, max_points),
            "edited": chart_series(edited, capacity if edited_capacity is None else edited_capacity, max_points),
        },
        "end": {side: result["summary"].get("endSeconds") for side, result in zip(SIDES, (baseline, edited))},
        "modes": mode_levels(*modes) if modes is not None else [],
    }


def _num(value: float) -> float | int:
    rounded = round(float(value), 6)
    return int(rounded) if rounded.is_integer() else rounded


def capacity_of(scenario: Any) -> dict[str, float]:
    """Nominal capacity per resource in base units: ClusterQueue plus cohort-owned quota (what
    the simulator's utilisation divides by)."""
    millis: dict[str, int] = defaultdict(int)
    for owner in (*scenario.cluster_queues, *scenario.cohorts):
        for flavor_quotas in owner.quotas:
            for resource, quota in flavor_quotas.resources.items():
                millis[resource] += quota.nominal
    return {resource: amount / 1000 for resource, amount in sorted(millis.items())}
