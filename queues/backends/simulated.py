"""The built-in simulated cluster: admission is the start, the declared duration the run."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar

from queues.backends.base import SyncReport

if TYPE_CHECKING:
    from queues.models import Cluster


class SimulatedBackend:
    """A simulated cluster: its clock finishes the workloads admitted onto it (``cluster``; None:
    every admitted workload, as when there was one cluster)."""

    name: ClassVar[str] = "simulated"
    starts_on_admission: ClassVar[bool] = True

    def __init__(self, cluster: Cluster | None = None) -> None:
        self.cluster = cluster

    @classmethod
    def for_cluster(cls, cluster: Cluster) -> SimulatedBackend:
        return cls(cluster)

    def start(self, workload_ids: Sequence[int]) -> None:
        """Nothing to tell: an admitted workload runs from its admission on."""

    def stop(self, workload_ids: Sequence[int]) -> None:
        """Nothing to tell: an evicted workload stopped when its admission interval closed."""

    def sync(self, now: datetime) -> SyncReport:
        from queues.services.cluster import complete_due_workloads

        return SyncReport(finished=complete_due_workloads(now=now, cluster=self.cluster))
