"""Estimated start times: today's cluster replayed forward on the engine's simulator.

The playground's own machinery (``live_export`` with no history, the engine's ``simulate``)
answers "when will my workload start?" for every pending workload at once:

* time 0 is now; what runs now is submitted at 0 (so it is placed first and keeps running) and
  what waits at 1 s, each with its real queue timestamp, priority and requests;
* policy, quotas, weights, admission modes, decayed usage and budgets are today's;
* a workload runs for its declared duration (or maximum runtime); one declaring neither runs
  past the horizon, and a running one for what is left of it.

Bounded: at most ``MAX_WORKLOADS`` pending and running workloads and ``HORIZON`` ahead (larger
clusters get no estimate rather than a slow page). Cached for ``CACHE_SECONDS`` for everyone, one
computation at a time. It only reads: no lock, no write, so admission never waits for it; pages
fetch it after they are drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.core.cache import cache
from django.utils import timezone

from fairshare.simulation.scenario import parse_scenario
from fairshare.simulation.simulator import simulate
from playground.compare import first_starts
from playground.live_export import LiveOptions, export_live_state
from queues.models import Workload, WorkloadState
from queues.ui.display import duration

MAX_WORKLOADS = 5_000
# A day ahead: the replay samples usage and plans after every sample, so its cost grows with the
# horizon (bench/estimate.py: the demo's 82 active workloads, 0.6 s for 6 h and 0.9 s for 24 h;
# 253 active, 1.6 s for 24 h; a 3-day horizon costs about three times a day's).
HORIZON = timedelta(hours=24)
CACHE_SECONDS = 120
_CACHE_KEY = "estimate:starts:v1"
_LOCK_KEY = "estimate:lock:v1"


@dataclass(frozen=True)
class Replay:
    """One forward replay: seconds from ``computed_at`` to each workload's first admission."""

    computed_at: datetime
    starts: dict[str, float]
    workloads: int
    open_ended: int  # pending or running workloads that declare no duration
    too_big: bool = False


@dataclass(frozen=True)
class Estimate:
    """What the workload page says: ``state`` is ``at`` (with ``start``), ``beyond`` (not within
    the horizon), ``too_big``, ``busy`` (being computed) or ``not_pending``."""

    state: str
    start: datetime | None = None
    computed_at: datetime | None = None
    assumptions: list[str] = field(default_factory=list)

    @property
    def horizon(self) -> str:
        return duration(HORIZON.total_seconds())

    @property
    def wait_from_now(self) -> str:
        if self.start is None:
            return ""
        return duration(max(0.0, (self.start - timezone.now()).total_seconds()))


def assumptions(replay: Replay) -> list[str]:
    return [
        "Policy, quotas, weights, admission modes, decayed usage and budgets stay as they are now.",
        "Running workloads keep running and finish after their declared duration or maximum runtime; "
        "pending ones run that long once admitted"
        + (
            f" ({replay.open_ended} declare neither and are assumed to run past the horizon)."
            if replay.open_ended
            else "."
        ),
        "No new submissions, cancellations or failures; no eviction other than what the policy itself does.",
        f"Looks {duration(HORIZON.total_seconds())} ahead over {replay.workloads:,} pending and running workloads "
        f"(estimates stop at {MAX_WORKLOADS:,}).",
    ]


def replay_now(now: datetime | None = None) -> Replay:
    """Replay the live state forward (the bounded, uncached computation)."""
    moment = now or timezone.now()
    active = Workload.objects.filter(state__in=(WorkloadState.PENDING, WorkloadState.ADMITTED))
    count = active.count()
    if count > MAX_WORKLOADS:
        return Replay(moment, {}, count, 0, too_big=True)
    document = export_live_state(
        now=moment, options=LiveOptions(days=0, lookahead_seconds=int(HORIZON.total_seconds()))
    )
    running = {
        f"{ns}/{name}"
        for ns, name in active.filter(state=WorkloadState.ADMITTED).values_list("namespace__name", "name")
    }
    open_ended = 0
    for entry in document.get("workloads", []):
        if entry["name"] not in running:
            entry["submitAt"] = "1s"  # after everything running now has been placed again at 0
        open_ended += "duration" not in entry
    result = simulate(parse_scenario(document))
    return Replay(moment, first_starts(result), count, open_ended)


def cached_replay() -> Replay | None:
    """The shared replay, computed by the first caller after it expires (None: another request
    is computing it right now)."""
    replay = cache.get(_CACHE_KEY)
    if replay is not None:
        return replay
    if not cache.add(_LOCK_KEY, 1, timeout=120):
        return None
    try:
        replay = replay_now()
        cache.set(_CACHE_KEY, replay, CACHE_SECONDS)
        return replay
    finally:
        cache.delete(_LOCK_KEY)


def estimate_for(workload: Workload) -> Estimate:
    """The estimated start of one workload (real names inside; only this workload's time leaves)."""
    if workload.state != WorkloadState.PENDING:
        return Estimate("not_pending")
    replay = cached_replay()
    if replay is None:
        return Estimate("busy")
    key = f"{workload.namespace.name}/{workload.name}"
    if not replay.too_big and key not in replay.starts and workload.queued_at > replay.computed_at:
        cache.delete(_CACHE_KEY)  # submitted after the cached replay: replay again, once
        replay = cached_replay() or replay
    notes = assumptions(replay)
    if replay.too_big:
        return Estimate("too_big", computed_at=replay.computed_at, assumptions=notes)
    if key not in replay.starts:
        return Estimate("beyond", computed_at=replay.computed_at, assumptions=notes)
    start = replay.computed_at + timedelta(seconds=replay.starts[key])
    return Estimate("at", start=start, computed_at=replay.computed_at, assumptions=notes)
