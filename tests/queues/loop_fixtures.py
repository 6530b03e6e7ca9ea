"""Small clusters for the control-loop tests, built through the models (as an admin would)."""

from __future__ import annotations

from decimal import Decimal

from fairshare.quantities import parse_millis
from queues import services
from queues.models import (
    AdmissionMode,
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    LocalQueue,
    Namespace,
    NamespaceQuota,
    QueueingStrategy,
    ResourceFlavor,
    Workload,
)


def make_cluster_queue(
    name: str = "cq",
    *,
    cpu: str = "8",
    cohort: Cohort | None = None,
    mode: str = AdmissionMode.USAGE_BASED,
    strategy: str = QueueingStrategy.BEST_EFFORT_FIFO,
    borrowing_limit: str | None = None,
    flavor: str = "default",
) -> ClusterQueue:
    cq = ClusterQueue.objects.create(name=name, cohort=cohort, admission_mode=mode, queueing_strategy=strategy)
    ClusterQueueQuota.objects.create(
        cluster_queue=cq,
        flavor=ResourceFlavor.objects.get_or_create(name=flavor)[0],
        resource="cpu",
        nominal=parse_millis(cpu),
        borrowing_limit=None if borrowing_limit is None else parse_millis(borrowing_limit),
    )
    return cq


def make_local_queue(
    namespace: str, name: str, cq: ClusterQueue, *, weight: str = "1", ns_quota: str | None = None
) -> LocalQueue:
    ns, _ = Namespace.objects.get_or_create(name=namespace)
    if ns_quota is not None:
        NamespaceQuota.objects.update_or_create(namespace=ns, resource="cpu", defaults={"hard": parse_millis(ns_quota)})
    return LocalQueue.objects.create(namespace=ns, name=name, cluster_queue=cq, weight=Decimal(weight))


def submit(lq: LocalQueue, name: str, cpu: str = "1", *, priority: int = 0, duration: int | None = 600) -> Workload:
    return services.submit_workload(
        local_queue=lq,
        name=name,
        pod_sets=[{"count": 1, "requests": {"cpu": cpu}}],
        priority=priority,
        duration_seconds=duration,
    )
