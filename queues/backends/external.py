"""External executors: they poll the API for admitted work and report start, finish and fail."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar

from queues.backends.base import SyncReport

if TYPE_CHECKING:
    from queues.models import Cluster


class ExternalBackend:
    name: ClassVar[str] = "external"
    starts_on_admission: ClassVar[bool] = False  # the executor's `start` report sets started_at

    def __init__(self, cluster: Cluster | None = None) -> None:
        self.cluster = cluster

    @classmethod
    def for_cluster(cls, cluster: Cluster) -> ExternalBackend:
        return cls(cluster)

    def start(self, workload_ids: Sequence[int]) -> None:
        """Executors find admitted work by polling ``GET /api/v1/workloads/?state=Admitted``."""

    def stop(self, workload_ids: Sequence[int]) -> None:
        """Executors see the eviction as the workload going back to Pending."""

    def sync(self, now: datetime) -> SyncReport:
        return SyncReport()  # executors report through the API; there is nothing to observe
