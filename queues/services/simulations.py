"""What-if runs over the API: the engine's simulator on a posted scenario document.

Small runs are answered within the request; larger ones are stored as a ``SimulationRun`` (the
caller sends ``queues.api.tasks.run_simulation`` once it commits), executed by a Celery worker
through ``execute_run``, and polled by id. Either way
the same engine code runs as for ``manage.py simulate`` and the playground: the scenario is
validated by ``parse_scenario`` (its errors name the field path) and run by ``simulate``.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.utils import timezone

from fairportal import whatif

from queues.engine.errors import ValidationError
from queues.engine.scenario import Scenario, apply_set, parse_scenario
from queues.engine.simulator import Simulation, simulate
from queues.models import SimulationRun

# Inline: answered within the request (a few tenths of a second on this project's machines).
INLINE_MAX_WORKLOADS = 200
INLINE_MAX_STEPS = 2_000
# Refused outright: more than a worker should hold in memory for one request.
MAX_WORKLOADS = 20_000
MAX_STEPS = 200_000


@dataclass(frozen=True)
class Prepared:
    document: dict[str, Any]
    scenario: Scenario

    @property
    def workload_count(self) -> int:
        return len(self.scenario.workloads) + sum(g.count for g in self.scenario.generators)

    @property
    def steps(self) -> int | None:
        """Ticks up to the horizon; None when the run lasts until the work is done."""
        clock = self.scenario.clock
        return None if clock.horizon_seconds is None else clock.horizon_seconds // clock.tick_seconds

    @property
    def runs_inline(self) -> bool:
        steps = self.steps
        return self.workload_count <= INLINE_MAX_WORKLOADS and steps is not None and steps <= INLINE_MAX_STEPS


def prepare(document: dict[str, Any], sets: list[str]) -> Prepared:
    """Apply the ``--set`` edits to a copy of ``document`` and validate it with the engine.

    Raises the engine's ``ValidationError`` naming the field path (``set[0]`` for an edit).
    """
    edited = copy.deepcopy(document)
    for index, assignment in enumerate(sets):
        try:
            apply_set(edited, assignment)
        except ValidationError as error:
            raise error.under(f"set[{index}]") from None
    scenario = parse_scenario(edited)
    workloads = len(scenario.workloads) + sum(g.count for g in scenario.generators)
    if workloads > MAX_WORKLOADS:
        raise ValidationError("generators", f"at most {MAX_WORKLOADS} workloads in a run, got {workloads}")
    clock = scenario.clock
    steps = None if clock.horizon_seconds is None else clock.horizon_seconds // clock.tick_seconds
    if steps is not None and steps > MAX_STEPS:
        raise ValidationError("clock", f"at most {MAX_STEPS} ticks (horizon / tick), got {steps}")
    Simulation(scenario)  # the simulator's own checks (a horizon when work has no duration)
    return Prepared(document=edited, scenario=scenario)


def run_now(prepared: Prepared) -> dict[str, Any]:
    """Simulate (within the request, or in the worker)."""
    return _json_safe(simulate(prepared.scenario))


def create_run(prepared: Prepared, *, owner: Any) -> SimulationRun:
    """Store a queued run for the worker (call inside a transaction: the owner's cap is checked
    under a lock); raises ``WhatIfLimitReached``."""
    whatif.claim_slot(owner)
    return SimulationRun.objects.create(owner=owner, scenario_name=prepared.scenario.name, document=prepared.document)


def mark_unsent(run_id: Any) -> None:
    whatif.mark_unsent(SimulationRun, run_id)


def execute_run(run_id: str) -> SimulationRun | None:
    """The worker's side: claim a queued run, simulate, store the result or the error.

    The claim is a conditional UPDATE, so a message delivered twice runs the scenario once.
    Returns None when the run was not (or no longer) queued.
    """
    claimed = SimulationRun.objects.filter(pk=run_id, status=SimulationRun.Status.QUEUED).update(
        status=SimulationRun.Status.RUNNING, started_at=timezone.now()
    )
    if claimed != 1:
        return None
    run = SimulationRun.objects.get(pk=run_id)
    try:
        result, error, status = run_now(prepare(run.document, [])), "", SimulationRun.Status.SUCCEEDED
    except ValidationError as problem:
        result, error, status = None, str(problem), SimulationRun.Status.FAILED
    except SoftTimeLimitExceeded:
        result, error, status = None, whatif.timed_out_message(), SimulationRun.Status.FAILED
    SimulationRun.objects.filter(pk=run_id).update(
        status=status, result=result, error=error, finished_at=timezone.now()
    )
    return SimulationRun.objects.get(pk=run_id)


def _json_safe(result: dict[str, Any]) -> dict[str, Any]:
    """The result as strict JSON (no NaN or infinity), so it can be stored and sent."""
    try:
        json.dumps(result, allow_nan=False)
    except ValueError:
        raise ValidationError("", "the simulation produced a non-finite number; check weights and capacities") from None
    return result
