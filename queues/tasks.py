"""Thin Celery tasks: each calls one service. Safe to run twice at once (locks, claims)."""

from __future__ import annotations

from celery import shared_task

from core.enqueue import enqueue_on_commit
from queues.admission import load, passes
from queues.services import cluster, submission, usage


@shared_task(name="queues.admission_pass", ignore_result=True)
def admission_pass(unit: str) -> dict[str, int]:
    result = passes.run_admission_pass(unit)
    return {"admitted": len(result.admitted), "evicted": len(result.evicted), "pending": result.pending}


@shared_task(name="queues.schedule_admission_passes", ignore_result=True)
def schedule_admission_passes() -> int:
    """Fan out one admission pass per unit, so units scale out over workers."""
    units = load.admission_units()
    for unit in units:
        enqueue_on_commit(admission_pass, unit.key)
    return len(units)


@shared_task(name="queues.sample_usage", ignore_result=True)
def sample_usage() -> int:
    return usage.sample_usage().rows


@shared_task(name="queues.sync_cluster", ignore_result=True)
def sync_cluster() -> dict[str, int]:
    """Observe the cluster backend: imports, starts, ends (the simulated cluster's clock), repairs."""
    report = cluster.sync_cluster()
    if report.ended:
        enqueue_on_commit(schedule_admission_passes)
    return {"imported": len(report.imported), "ended": len(report.ended), "backed_off": int(report.backed_off)}


@shared_task(name="queues.prune_usage_series", ignore_result=True)
def prune_usage_series() -> int:
    return usage.prune_usage_series().deleted


@shared_task(name="queues.prune_idempotency_keys", ignore_result=True)
def prune_idempotency_keys() -> int:
    return submission.prune_idempotency_keys()
