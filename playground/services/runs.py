"""Runs: validate the edits and queue a run; the worker simulates both sides and compares.

``start_run`` is the one way a run starts, for the playground's pages and API and for
``/api/v1/simulations/`` alike. A playground run needs at least one edit; a run with no edits is
a single simulation (a scenario posted to ``/api/v1/simulations/``, checked against that
endpoint's caps by ``services.simulations.prepare``): the worker simulates the scenario alone and
stores its outcome as the baseline, with no comparison.

``start_run`` checks everything a run needs before writing it (the edits apply and the edited
scenario validates; the error names ``edits[i]``), stores what the edits change
(``policy_diff``), takes a slot of the owner's what-if cap (``lane.claim_slot``) and sends the
task once the transaction commits. ``execute_next`` is the worker's side: a message only says
"work available"; the worker claims the next queued run in fair order (``fair_order``: users
served round-robin, ``FOR UPDATE SKIP LOCKED`` and a conditional UPDATE, so a run is claimed
once), simulates the baseline and the
edited scenario on the engine (reusing a stored outcome of the same scenario and edits: the
engine is deterministic), writes progress as it goes, and stores the comparison view the page
draws.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, F, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone
from psycopg import pq

from core.enqueue import enqueue_on_commit, send
from fairshare.errors import ValidationError
from fairshare.simulation.scenario import Scenario as EngineScenario
from fairshare.simulation.scenario import parse_scenario
from fairshare.simulation.simulator import simulate
from playground import documents
from playground.compare import admission_modes, capacity_of, compare
from playground.documents import EditError
from playground.models import Outcome, Run, Scenario
from playground.policy_diff import environment_lines, policy_deltas
from playground.services import lane

# Share of the progress bar per phase: the two simulations dominate, the comparison is quick.
BASELINE_SPAN = (0.0, 0.45)
EDITED_SPAN = (0.45, 0.9)
PROGRESS_WRITE_SECONDS = 0.25  # at most four progress writes a second
RUN_TASK = "playground.run"  # playground.tasks.run_playground, sent by name: that module imports this one


def start_run(scenario: Scenario, *, edits: Sequence[str], owner: Any, title: str = "") -> Run:
    """Validate ``edits`` against ``scenario`` and queue a run; raises ``EditError`` and
    ``WhatIfLimitReached`` and ``StorageQuotaExceeded``. No edits: a single simulation, for a scenario of source ``api`` only
    (already validated by ``services.simulations.prepare``). A broker that cannot be reached
    leaves the run failed."""
    edits = [str(edit).strip() for edit in edits]
    changes: dict[str, Any] = {}
    if edits:
        baseline = documents.validate(scenario.document)
        _, edited = documents.apply_edits(scenario.document, edits)
        deltas = policy_deltas(baseline, edited)
        changes = {
            "deltas": [delta.to_dict() for delta in deltas],
            "environment": environment_lines(deltas, edited.policy),
        }
    elif scenario.source != Scenario.Source.API:
        raise EditError(0, "", "add at least one edit: the baseline alone needs no comparison")
    with transaction.atomic():
        lane.claim_slot(owner)  # raises WhatIfLimitReached
        lane.check_storage(owner, runs=1)  # raises StorageQuotaExceeded
        run = Run.objects.create(scenario=scenario, owner=owner, title=title[:200], edits=edits, **changes)
        send_on_commit(run)
    return run


def send_on_commit(run: Run) -> None:
    """Send a queued run to the worker once the transaction commits; a broker that cannot be
    reached marks it failed (``lane.UNSENT_MESSAGE``) instead of leaving it queued."""
    enqueue_on_commit(RUN_TASK, str(run.pk), on_failure=lambda: lane.mark_unsent(run.pk))


def resend(run: Run) -> bool:
    """Send a run that is still queued again (its message may have been lost); the claim makes
    a second delivery harmless. False when it is no longer queued or the broker is down."""
    if run.status != Run.Status.QUEUED:
        return False
    return send(RUN_TASK, str(run.pk))


def edits_key(edits: Sequence[str]) -> str:
    return hashlib.sha256(json.dumps(list(edits)).encode("utf-8")).hexdigest()


class _ProgressWriter:
    """Maps a simulation's 0..1 onto the run's span and writes it, at most every 0.25 s."""

    def __init__(self, run_id: Any, span: tuple[float, float]) -> None:
        self.run_id, self.span, self.last = run_id, span, 0.0

    def __call__(self, fraction: float) -> None:
        now = time.monotonic()
        if now - self.last < PROGRESS_WRITE_SECONDS and fraction < 1.0:
            return
        self.last = now
        low, high = self.span
        Run.objects.filter(pk=self.run_id).update(progress=round(low + (high - low) * fraction, 4))


def _outcome(
    scenario: Scenario, edits: Sequence[str], parsed: EngineScenario, progress: Callable[[float], None]
) -> Outcome:
    key = edits_key(edits)
    stored = Outcome.objects.filter(scenario=scenario, edits_key=key).first()
    if stored is not None:
        progress(1.0)
        return stored
    started = time.perf_counter()
    data = json_safe(simulate(parsed, progress=progress))
    seconds = time.perf_counter() - started
    try:
        with transaction.atomic():
            return Outcome.objects.create(
                scenario=scenario, edits_key=key, edits=list(edits), data=data, seconds=seconds
            )
    except IntegrityError:  # another worker stored the same outcome meanwhile
        return Outcome.objects.get(scenario=scenario, edits_key=key)


def _claim(run_id: Any) -> bool:
    """queued -> running, conditionally: a run is claimed once, whoever asks twice."""
    claimed = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED).update(
        status=Run.Status.RUNNING, phase=Run.Phase.BASELINE, progress=0.0, started_at=timezone.now()
    )
    return claimed == 1


def fair_order() -> QuerySet[Run]:
    """Queued runs a worker may take next, fairest first: only each user's oldest queued run (the
    head of their line), users with fewer runs running first, then the user served longest ago
    (never served first), then the oldest head. One worker therefore serves users round-robin:
    another user's queued runs delay a user's next run by at most one run each."""
    same_owner = Run.objects.filter(owner=OuterRef("owner"))
    last_started = same_owner.filter(started_at__isnull=False).order_by("-started_at").values("started_at")[:1]
    running = (
        same_owner.filter(status=Run.Status.RUNNING).order_by().values("owner").annotate(n=Count("pk")).values("n")
    )
    earlier = same_owner.filter(status=Run.Status.QUEUED, created_at__lt=OuterRef("created_at"))
    return (
        Run.objects.filter(status=Run.Status.QUEUED)
        .exclude(Exists(earlier))
        .annotate(last_started=Subquery(last_started), running_now=Coalesce(Subquery(running), 0))
        .order_by("running_now", F("last_started").asc(nulls_first=True), "created_at", "pk")
    )


def claim_next() -> Any | None:
    """Claim the next run in ``fair_order``: its row locked ``FOR UPDATE SKIP LOCKED`` (two
    workers never wait on, or take, the same run), then the conditional UPDATE. None: no work."""
    for _ in range(5):  # a run claimed meanwhile by a direct execute_run: look again, boundedly
        with transaction.atomic():
            run_id = fair_order().select_for_update(skip_locked=True, of=("self",)).values_list("pk", flat=True).first()
            if run_id is None:
                return None
            if _claim(run_id):
                return run_id
    return None


def execute_next() -> Run | None:
    """The what-if worker's task: a message is a "work available" token, not a run of its own;
    the worker runs whichever queued run is next in ``fair_order``. None when nothing is queued."""
    run_id = claim_next()
    return None if run_id is None else _execute(run_id)


def execute_run(run_id: Any) -> Run | None:
    """Run this run now (by hand and in tests); None when it was not (or no longer) queued."""
    if not _claim(run_id):
        return None
    return _execute(run_id)


def _execute(run_id: Any) -> Run:
    """A claimed (``running``) run: simulate, store, finish."""
    run = Run.objects.select_related("scenario").get(pk=run_id)
    try:
        stored = _compare(run) if run.edits else _simulate_alone(run)
    except (ValidationError, EditError) as problem:
        _finish(run.pk, status=Run.Status.FAILED, error=str(problem))
    except SoftTimeLimitExceeded:
        _drop_interrupted_connection()
        _finish(run.pk, status=Run.Status.FAILED, error=lane.timed_out_message())
    except Exception as problem:  # a bug must not leave the page spinning: record it, then raise
        _finish(run.pk, status=Run.Status.FAILED, error=f"internal error: {type(problem).__name__}: {problem}")
        raise
    else:
        _finish(run.pk, status=Run.Status.SUCCEEDED, progress=1.0, phase=Run.Phase.DONE, **stored)
    return Run.objects.get(pk=run.pk)


def _compare(run: Run) -> dict[str, Any]:
    """Both sides simulated (progress written per phase), then the comparison view."""
    baseline_scenario = documents.validate(run.scenario.document)
    _, edited_scenario = documents.apply_edits(run.scenario.document, run.edits)
    baseline = _outcome(run.scenario, [], baseline_scenario, _ProgressWriter(run.pk, BASELINE_SPAN))
    Run.objects.filter(pk=run.pk).update(phase=Run.Phase.EDITED, progress=EDITED_SPAN[0], baseline=baseline)
    edited = _outcome(run.scenario, run.edits, edited_scenario, _ProgressWriter(run.pk, EDITED_SPAN))
    Run.objects.filter(pk=run.pk).update(phase=Run.Phase.COMPARING, progress=EDITED_SPAN[1], edited=edited)
    view = compare(
        baseline.data,
        edited.data,
        capacity=capacity_of(baseline_scenario),
        budget_labels=[budget.label for budget in baseline_scenario.budgets],
        modes=(admission_modes(baseline_scenario), admission_modes(edited_scenario)),
        clock_start=baseline_scenario.clock.start,
        edited_capacity=capacity_of(edited_scenario),
    )
    return {"comparison": view}


def _simulate_alone(run: Run) -> dict[str, Any]:
    """A run with no edits: the scenario alone (checked against the caps of
    ``services.simulations`` when it was stored), its outcome stored as the baseline."""
    parsed = parse_scenario(run.scenario.document)
    return {"baseline": _outcome(run.scenario, [], parsed, _ProgressWriter(run.pk, (0.0, 1.0)))}


def json_safe(result: dict[str, Any]) -> dict[str, Any]:
    """The simulator's result as strict JSON (no NaN or infinity), so it can be stored and sent."""
    try:
        json.dumps(result, allow_nan=False)
    except ValueError:
        raise ValidationError("", "the simulation produced a non-finite number; check weights and capacities") from None
    return result


def _drop_interrupted_connection() -> None:
    """The soft time limit is a signal: when it lands while a progress write waits for
    PostgreSQL, the connection is left in the middle of that command and refuses the next one.
    Drop it then; the next query opens a new connection."""
    raw = connection.connection
    info = getattr(raw, "info", None)  # psycopg's; other backends have nothing to drop
    if info is not None and info.transaction_status == pq.TransactionStatus.ACTIVE:
        connection.close()


def _finish(run_id: Any, **fields: Any) -> None:
    Run.objects.filter(pk=run_id).update(finished_at=timezone.now(), **fields)
