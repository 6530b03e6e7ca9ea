"""How the Slurm backend talks to Slurm: one interface, two transports.

``SLURM_TRANSPORT`` picks one (``backend.make_transport``):

- ``cli`` (default, ``client.SlurmClient``): Slurm's own tools (``squeue``/``sacct --json``,
  ``scontrol``, ``scancel``, ``sbatch``) with a munge key and ``SLURM_CONF`` on the worker.
- ``rest`` (``rest.SlurmRestClient``): slurmrestd over HTTP with a JWT (``auth/jwt``), for
  workers that have no Slurm tools or munge key.

Both return the same job records (Slurm's OpenAPI data model: ``squeue --json`` prints what
slurmrestd's ``/jobs`` answers, for the same data_parser version), take job id lists (one call
for many jobs where the transport allows it), return per-job refusals instead of raising, and
raise ``BackendUnavailable`` when Slurm does not answer within the timeout.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

# scontrol-style field names ``update`` accepts (both transports): the ones the backend sets.
UPDATE_FIELDS = frozenset({"Partition", "StartTime", "AdminComment"})


@dataclass(frozen=True)
class CommandResult:
    refused: dict[str, str]  # job id -> Slurm's message, for jobs the command did not apply to


class CallCounter:
    """Calls to Slurm (commands run, HTTP requests sent) by every transport of this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = 0

    def add(self, count: int = 1) -> None:
        with self._lock:
            self.total += count


calls = CallCounter()


@runtime_checkable
class SlurmTransport(Protocol):
    def jobs(self) -> list[dict[str, Any]]:
        """Every job slurmctld holds: pending, running, and those ended less than MinJobAge ago."""

    def accounting(self, job_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The latest accounting record of each job (the allocation, not its steps)."""

    def submit(self, options: Sequence[str], command: str) -> str:
        """Submit a batch job running ``command`` with sbatch-style ``options``; the new job's id."""

    def release(self, job_ids: Sequence[str]) -> CommandResult: ...

    def hold(self, job_ids: Sequence[str]) -> CommandResult: ...

    def requeue_hold(self, job_ids: Sequence[str]) -> CommandResult: ...

    def cancel(self, job_ids: Sequence[str]) -> CommandResult: ...

    def update(self, job_ids: Sequence[str], **fields: str) -> CommandResult:
        """Set ``fields`` (``UPDATE_FIELDS``, scontrol's names) on every job."""


def check_update_fields(fields: dict[str, str]) -> None:
    unknown = sorted(set(fields) - UPDATE_FIELDS)
    if unknown:
        raise ValueError(
            f"update: unsupported field(s) {', '.join(unknown)}; supported: {', '.join(sorted(UPDATE_FIELDS))}"
        )
