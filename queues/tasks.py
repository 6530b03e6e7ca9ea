"""Thin Celery tasks: each calls one service. Safe to run twice at once (locks, claims)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import transaction

from queues import snapshot
from queues.services import admission, cluster, usage

logger = logging.getLogger(__name__)


@shared_task(name="queues.admission_pass", ignore_result=True)
def admission_pass(unit: str) -> dict[str, int]:
    result = admission.run_admission_pass(unit)
    return {"admitted": len(result.admitted), "evicted": len(result.evicted), "pending": result.pending}


@shared_task(name="queues.schedule_admission_passes", ignore_result=True)
def schedule_admission_passes() -> int:
    """Fan out one admission pass per unit, so units scale out over workers."""
    units = snapshot.admission_units()
    for unit in units:
        admission_pass.delay(unit.key)
    return len(units)


@shared_task(name="queues.sample_usage", ignore_result=True)
def sample_usage() -> int:
    return usage.sample_usage().rows


@shared_task(name="queues.complete_due_workloads", ignore_result=True)
def complete_due_workloads() -> int:
    finished = cluster.complete_due_workloads()
    if finished:
        transaction.on_commit(lambda: schedule_admission_passes.delay())
    return len(finished)


@shared_task(name="queues.prune_usage_series", ignore_result=True)
def prune_usage_series() -> int:
    return usage.prune_usage_series().deleted


def request_admission_pass(cluster_queue_id: int) -> None:
    """Ask for a pass on the unit of ``cluster_queue_id`` once the current transaction commits.

    Losing the broker only delays admission (beat runs passes every few seconds anyway), so a
    publish failure is logged, never raised into the request that submitted the workload.
    """

    def publish() -> None:
        unit = snapshot.unit_for_cluster_queue(cluster_queue_id)
        if unit is None:
            return
        try:
            admission_pass.delay(unit.key)
        except Exception:  # noqa: BLE001 - broker down: the beat schedule catches up
            logger.warning("could not enqueue an admission pass for %s; the next scheduled pass will run it", unit.key)

    transaction.on_commit(publish)
