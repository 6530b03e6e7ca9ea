"""Asking for an admission pass after a change that may let workloads in (a submission, a finish),
and the beat's fan-out of one pass per unit.

The pass is the ``queues.admission_pass`` task, sent by name so the services that ask for one do
not import ``queues.tasks`` (which imports them).

**Affinity.** Each request names the unit's shard: its rank among the units (sorted by key, as
``load.admission_units`` returns them) modulo ``CONTROL_LOOP_PROCESSES``, so the units spread
evenly over the control processes; ``fairportal.schedule.ControlRouter`` sends it to that
shard's queue, ``control.<shard>``, consumed by one process (``fairportal.control_workers``),
whose snapshot reuse stays warm for its units. Every process computes the same ranks from the
same rows; a unit added or removed may move others to another shard (one cold pass each).

**Duplicates.** On PostgreSQL a request carries when it was sent, on the database server's clock,
read after the change that asks for it committed; a pass notes, per unit and per process, when it
started on the same clock, before reading anything. A request sent before a pass of this process
started was answered by that pass (it read after the change committed), so it is skipped
(``passes.run_requested_pass``): requests that piled up while a unit's process was down cost one
pass, not one each. One clock for all, so no skew between hosts; should the server's clock step
back, a request could be skipped wrongly, and the unit's next request or beat's next fan-out
(``ADMISSION_PASS_INTERVAL``) runs the pass. On SQLite requests carry no time and always run.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.db import transaction

from core.enqueue import send
from queues.admission import load

ADMISSION_PASS = "queues.admission_pass"


def shards(units: Sequence[load.AdmissionUnit]) -> dict[str, int]:
    """Each unit's shard: its rank in ``units`` (sorted by key) modulo CONTROL_LOOP_PROCESSES."""
    processes = settings.CONTROL_LOOP_PROCESSES
    return {unit.key: rank % processes for rank, unit in enumerate(units)}


def _send(units: Sequence[load.AdmissionUnit], keys: Sequence[str]) -> None:
    sent = load.database_clock()
    shard = shards(units)
    for key in keys:
        send(ADMISSION_PASS, key, shard=shard[key], requested=sent)


def request_admission_pass(cluster_queue_id: int) -> None:
    """Ask for a pass on the unit of ``cluster_queue_id`` once the current transaction commits
    (three queries then: the units, and the clock on PostgreSQL).

    Losing the broker only delays admission (beat runs passes every few seconds anyway), so a
    publish failure is logged, never raised into the request that submitted the workload.
    """

    def publish() -> None:
        units = load.admission_units()
        unit = next((unit for unit in units if cluster_queue_id in unit.cluster_queue_ids), None)
        if unit is not None:
            _send(units, [unit.key])

    transaction.on_commit(publish)


def request_every_pass() -> int:
    """One pass per unit, each to its shard, once the current transaction commits (beat's
    fan-out; three queries). Returns the number of units."""
    units = load.admission_units()
    transaction.on_commit(lambda: _send(units, [unit.key for unit in units]))
    return len(units)
