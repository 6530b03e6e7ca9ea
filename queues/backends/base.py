"""The cluster backend interface: what the control loop needs from whatever runs admitted work.

The admission pass decides in the database; a backend makes the cluster follow and reports
back what the cluster did:

- ``start(ids)``: workloads just admitted (after the pass committed). Slurm: release the held
  jobs, each on the partition its flavor maps to.
- ``stop(ids)``: workloads just evicted, by preemption or by a HoldAndDrain budget (after the
  commit). Slurm: requeue the jobs held.
- ``sync(now)``: observe the cluster and bring the database in line: new submissions become
  pending workloads, starts, finishes, failures and cancellations are recorded with the
  cluster's own timestamps, and the cluster is repaired where it lags the database (a release
  or a requeue lost to a crash). ``sync`` is also the resync after a restart: it keeps no
  memory between calls, everything it needs is in the database and in the cluster.
- ``for_cluster(cluster)``: one backend per ``Cluster`` row (``queues.backends.backend_for``);
  ``start``/``stop``/``sync`` only ever touch that cluster's workloads and jobs.
- ``starts_on_admission``: the wall-time source. True: admission is the start (the
  simulated cluster); False: the start is reported later (executors' ``start``, Slurm's start
  time), and for Slurm the admission interval is moved to it.

Every call takes lists: one ``scontrol`` for many jobs. A backend that cannot reach its
cluster raises ``BackendUnavailable``; the caller records it and backs off.

A backend that can also create the cluster's job for a workload submitted through fairportal
(the REST API's ``command``) implements ``CommandRunner`` as well (Slurm: ``sbatch --hold``).
When the workload's ClusterQueue spans several clusters, the job is created at admission on
the cluster the pass chose: that backend's ``start`` creates it from ``Workload.command``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

if TYPE_CHECKING:
    from queues.models import Cluster, Workload


class BackendUnavailable(Exception):
    """The cluster did not answer (or answered that it cannot act now): try again later."""


class SubmissionRefused(Exception):
    """The cluster refused to create the job (its message says why): the client's to fix."""


@dataclass
class SyncReport:
    """What one sync did, for logs, metrics and tests (workload ids)."""

    imported: list[int] = field(default_factory=list)
    started: list[int] = field(default_factory=list)
    finished: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    cancelled: list[int] = field(default_factory=list)
    restarted: list[int] = field(default_factory=list)  # admitted but still held: released again
    stopped: list[int] = field(default_factory=list)  # pending but running: held again
    rejected: list[str] = field(default_factory=list)  # jobs that could not be imported
    backed_off: bool = False

    @property
    def ended(self) -> list[int]:
        return self.finished + self.failed + self.cancelled


@runtime_checkable
class ClusterBackend(Protocol):
    name: ClassVar[str]
    starts_on_admission: ClassVar[bool]

    @classmethod
    def for_cluster(cls, cluster: Cluster) -> ClusterBackend:
        """The backend of one ``Cluster`` row, connected as the row says."""

    def start(self, workload_ids: Sequence[int]) -> None:
        """Run these newly admitted workloads."""

    def stop(self, workload_ids: Sequence[int]) -> None:
        """Stop these evicted workloads so that they can run again when re-admitted."""

    def sync(self, now: datetime) -> SyncReport:
        """Observe the cluster and reconcile the database with it (and it with the database)."""


@runtime_checkable
class CommandRunner(Protocol):
    def submit(self, workload: Workload, command: str) -> str:
        """Create the cluster's job for ``workload`` (held until admitted) and link it; its id."""

    def check(self, workload: Workload) -> None:
        """Raise ``SubmissionRefused`` if this cluster could not create ``workload``'s job (its
        requests); the job itself is created at admission (a ClusterQueue over several clusters)."""
