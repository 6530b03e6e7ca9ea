"""Small clusters and a clock for the budget tests: everything happens at chosen moments."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from budgets import services
from budgets.models import Budget
from fairshare.quantities import parse_millis
from queues import services as queue_services
from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.models import ClusterQueue, ClusterQueueQuota, LocalQueue, ResourceFlavor, Workload
from queues.services import transitions
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def at(**delta: float) -> datetime:
    """``T0`` plus a duration, e.g. ``at(hours=2, minutes=10)``."""
    return T0 + timedelta(**delta)


def cluster(
    cpu: str = "8", *, namespace: str = "team-a", queue: str = "main", memory: str | None = None
) -> tuple[ClusterQueue, LocalQueue]:
    cq = make_cluster_queue(f"cq-{namespace}", cpu=cpu)
    if memory is not None:
        ClusterQueueQuota.objects.create(
            cluster_queue=cq,
            flavor=ResourceFlavor.objects.get(name="default"),
            resource="memory",
            nominal=parse_millis(memory),
        )
    return cq, make_local_queue(namespace, queue, cq)


def add_gpu_quota(cq: ClusterQueue, gpus: str, flavor: str = "default") -> None:
    ClusterQueueQuota.objects.create(
        cluster_queue=cq,
        flavor=ResourceFlavor.objects.get_or_create(name=flavor)[0],
        resource="nvidia.com/gpu",
        nominal=parse_millis(gpus),
    )


def budget(target: LocalQueue | Any, *, hours: str = "1", **fields: Any) -> Budget:
    """A budget anchored at ``T0`` on a LocalQueue (or ``namespace=``/``cluster_queue=`` in fields)."""
    if isinstance(target, LocalQueue):
        fields["local_queue"] = target
    fields.setdefault("name", "team-budget")
    fields.setdefault("anchor", T0)
    created = Budget(allocated_hours=Decimal(hours), **fields)
    created.full_clean()
    created.save()
    return created


def submit(
    lq: LocalQueue,
    name: str,
    *,
    cpu: str = "1",
    requests: dict[str, str] | None = None,
    duration: int | None = None,
    max_runtime: int | None = None,
    count: int = 1,
) -> Workload:
    return queue_services.submit_workload(
        local_queue=lq,
        name=name,
        pod_sets=[{"count": count, "requests": requests or {"cpu": cpu}}],
        duration_seconds=duration,
        max_runtime_seconds=max_runtime,
    )


def admission_pass(cq: ClusterQueue, moment: datetime) -> admission.PassResult:
    return admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.id).key, now=moment)


def evict(workload: Workload, moment: datetime) -> None:
    assert transitions.evict(workload_id=workload.pk, now=moment, message="test eviction")


def finish(workload: Workload, moment: datetime) -> None:
    assert transitions.finish(workload_id=workload.pk, at=moment)


def reconcile(target: Budget, moment: datetime) -> services.CycleResult:
    result = services.reconcile_budget(target.pk, now=moment)
    assert result is not None
    return result


def state_of(workload: Workload) -> str:
    workload.refresh_from_db()
    return workload.state
