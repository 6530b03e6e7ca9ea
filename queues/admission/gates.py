"""Admission gates: per-workload vetoes from outside the fair-share domain.

The engine knows queue-wide holds (``QueueHold``) but nothing per workload. A gate sees the
pending workloads of an admission unit just before the engine plans and names those that must
wait this pass, each with a reason code and message (budgets' "safe admission": a workload whose
maximum runtime could overrun what is left of its budget). Gated workloads are left out of the
snapshot, so the engine neither admits them nor lets them block a StrictFIFO queue, and their
reason is written by the pass's writer (``admission.apply``) like any other pending reason.

Gates are registered by the apps that own them (``AppConfig.ready``), so this package never
imports them: the dependency stays one-way. This module reads the loaded snapshot and returns
reasons; it writes nothing and imports nothing above it.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core import extensions
from core.extensions import ExtensionPoint

if TYPE_CHECKING:
    from queues.admission.load import LoadedSnapshot


@dataclass(frozen=True, slots=True)
class Candidate:
    """A pending workload as a gate sees it (ids are database ids)."""

    key: str
    workload_id: int
    local_queue_id: int
    namespace_id: int
    cluster_queue_id: int
    requests: Mapping[str, int]
    priority: int
    queued_at: float


# A gate returns {workload key: (reason code, message)} for the candidates that must wait.
Gate = Callable[[Sequence[Candidate], datetime], Mapping[str, tuple[str, str]]]

# Registered with ``core.extensions.register(ADMISSION_GATES, name, gate)``, idempotent by name.
ADMISSION_GATES: ExtensionPoint[Gate] = ExtensionPoint("admission gates")


# Per process and unit: the candidates of the previous pass, with the workloads (the engine's
# objects, compared by identity: the load step reuses them while their rows are unchanged) and
# the ids they were built from. Replaced by every pass that builds them.
_PREVIOUS: dict[str, tuple[tuple[Any, ...], tuple[Mapping[str, int], ...], list[Candidate]]] = {}


def candidates(loaded: LoadedSnapshot) -> list[Candidate]:
    """The pending workloads of a loaded snapshot (those of the previous pass of the unit in this
    process when it loaded the very same workload objects under the same ids)."""
    snapshot = loaded.snapshot
    ids = (loaded.workload_ids, loaded.local_queue_ids, loaded.namespace_ids, loaded.cluster_queue_ids)
    previous = _PREVIOUS.get(loaded.unit.key)
    if (
        previous is not None
        and len(previous[0]) == len(snapshot.workloads)
        and all(map(operator.is_, previous[0], snapshot.workloads))
        and previous[1] == ids
    ):
        return previous[2]
    queues = {lq.key: lq for lq in snapshot.local_queues}
    result = []
    for workload in snapshot.workloads:
        if workload.admitted:
            continue
        lq = queues[workload.local_queue]
        result.append(
            Candidate(
                key=workload.key,
                workload_id=loaded.workload_ids[workload.key],
                local_queue_id=loaded.local_queue_ids[lq.key],
                namespace_id=loaded.namespace_ids[lq.namespace],
                cluster_queue_id=loaded.cluster_queue_ids[lq.cluster_queue],
                requests=workload.requests,
                priority=workload.priority,
                queued_at=workload.queued_at,
            )
        )
    _PREVIOUS[loaded.unit.key] = (snapshot.workloads, tuple(dict(mapping) for mapping in ids), result)
    return result


def apply_gates(loaded: LoadedSnapshot, now: datetime) -> dict[str, tuple[str, str]]:
    """Run every gate; drop gated workloads from ``loaded.snapshot``; return their reasons."""
    gates = [gate for _, gate in extensions.items(ADMISSION_GATES)]
    if not gates:
        return {}
    pending = candidates(loaded)
    if not pending:
        return {}
    gated: dict[str, tuple[str, str]] = {}
    for gate in gates:
        for key, reason in gate(pending, now).items():
            gated.setdefault(key, reason)
    if gated:
        snapshot = loaded.snapshot
        loaded.snapshot = dataclasses.replace(
            snapshot, workloads=tuple(w for w in snapshot.workloads if w.key not in gated)
        )
    return gated
