"""Single simulations (``/api/v1/simulations/``): the engine's simulator on a posted scenario.

Every run goes through the what-if lane (none runs in the web process): the posted document
(``set`` edits applied) is stored as a ``Scenario`` of source ``api``
(``scenarios.create_from_simulation``) with one ``Run`` started by ``runs.start_run`` (the
playground's own, under the user's cap and storage quota), sent to the what-if worker once the
transaction commits, executed by ``runs.execute_next`` (a run with no edits simulates the
scenario alone) and polled by id. The scenario is checked against the loader's size limits
(``fairshare.simulation.scenario.check_limits``) before it is copied, then validated by
``parse_scenario`` (errors name the field path), as for ``manage.py simulate``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from fairshare.errors import ValidationError
from fairshare.simulation.scenario import Scenario as EngineScenario
from fairshare.simulation.scenario import apply_set, check_limits, parse_scenario
from fairshare.simulation.simulator import Simulation
from playground import documents

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


def prepare(document: dict[str, Any], sets: list[str]) -> Prepared:
    """Apply the ``--set`` edits to a copy of ``document`` and validate it with the engine.

    Raises the engine's ``ValidationError`` naming the field path (``set[0]`` for an edit) or
    the size limit.
    """
    documents.check_depth(document, "scenario")
    check_limits(document)  # before the copy: a huge document is refused cheaply
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
