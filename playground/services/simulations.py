"""Single simulations (``/api/v1/simulations/``): the engine's simulator on a posted scenario.

Small runs are answered within the request and not stored. Larger ones are playground runs
with no edits: the posted document (``set`` edits applied) is stored as a ``Scenario`` of
source ``api`` (``scenarios.create_from_simulation``) with one ``Run`` started by
``runs.start_run`` (the playground's own), sent to the what-if worker (``playground.run``) once
the transaction commits, executed by ``runs.execute_run`` (which simulates the scenario alone
when a run has no edits) and polled by id. Either way the same engine code runs as for
``manage.py simulate``: the scenario is validated by ``parse_scenario`` (its errors name the
field path) and run by ``simulate``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from fairshare.errors import ValidationError
from fairshare.simulation.scenario import Scenario as EngineScenario
from fairshare.simulation.scenario import apply_set, parse_scenario
from fairshare.simulation.simulator import Simulation, simulate
from playground import documents
from playground.services import runs

# Inline: answered within the request (a few tenths of a second on this project's machines).
INLINE_MAX_WORKLOADS = 200
INLINE_MAX_STEPS = 2_000
# Refused outright: more than a worker should hold in memory for one request.
MAX_WORKLOADS = documents.MAX_WORKLOADS
MAX_STEPS = 200_000


@dataclass(frozen=True)
class Prepared:
    document: dict[str, Any]
    scenario: EngineScenario

    @property
    def workload_count(self) -> int:
        return documents.workload_count(self.scenario)

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
    documents.check_depth(document, "scenario")
    edited = copy.deepcopy(document)
    for index, assignment in enumerate(sets):
        try:
            apply_set(edited, assignment)
        except ValidationError as error:
            raise error.under(f"set[{index}]") from None
    prepared = Prepared(document=edited, scenario=parse_scenario(edited))
    if prepared.workload_count > MAX_WORKLOADS:
        raise ValidationError(
            "generators", f"at most {MAX_WORKLOADS} workloads in a run, got {prepared.workload_count}"
        )
    if prepared.steps is not None and prepared.steps > MAX_STEPS:
        raise ValidationError("clock", f"at most {MAX_STEPS} ticks (horizon / tick), got {prepared.steps}")
    Simulation(prepared.scenario)  # the simulator's own checks (a horizon when work has no duration)
    return prepared


def run_now(prepared: Prepared) -> dict[str, Any]:
    """Simulate within the request (nothing is stored)."""
    return runs.json_safe(simulate(prepared.scenario))
