"""Thin Celery tasks: each calls one service. Safe to run twice at once (locks, claims)."""

from __future__ import annotations

import os
from typing import Any

from celery import Task, shared_task

from core.enqueue import enqueue_on_commit
from queues.admission import passes
from queues.services import cluster, pass_requests, submission, usage


@shared_task(bind=True, name="queues.admission_pass", ignore_result=True)
def admission_pass(self: Task, unit: str, shard: int | None = None, requested: int | None = None) -> dict[str, Any]:
    """One unit's pass; ``shard`` routed it (``fairportal.schedule.ControlRouter``), ``requested``
    lets a request that a later pass of this process answered be skipped. The report names the
    process that ran it (``worker``, ``pid``): the affinity, observable."""
    result = passes.run_requested_pass(unit, requested)
    ran = {"worker": self.request.hostname, "pid": os.getpid(), "skipped": result is None}
    if result is None:
        return {**ran, "admitted": 0, "evicted": 0, "pending": None}
    return {**ran, "admitted": len(result.admitted), "evicted": len(result.evicted), "pending": result.pending}


@shared_task(name="queues.schedule_admission_passes", ignore_result=True)
def schedule_admission_passes() -> int:
    """Fan out one admission pass per unit, each to its unit's control process."""
    return pass_requests.request_every_pass()


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
