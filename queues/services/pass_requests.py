"""Asking for an admission pass after a change that may let workloads in (a submission, a finish).

The pass is the ``queues.admission_pass`` task, sent by name so the services that ask for one do
not import ``queues.tasks`` (which imports them).
"""

from __future__ import annotations

from django.db import transaction

from core.enqueue import send
from queues.admission import load

ADMISSION_PASS = "queues.admission_pass"


def request_admission_pass(cluster_queue_id: int) -> None:
    """Ask for a pass on the unit of ``cluster_queue_id`` once the current transaction commits.

    Losing the broker only delays admission (beat runs passes every few seconds anyway), so a
    publish failure is logged, never raised into the request that submitted the workload.
    """

    def publish() -> None:
        unit = load.unit_for_cluster_queue(cluster_queue_id)
        if unit is not None:
            send(ADMISSION_PASS, unit.key)

    transaction.on_commit(publish)
