"""Celery beat schedule, derived from the configuration (docs/design.md "Control loop"), and the
routing: what-if work off the control loop's queue (``playground.services.lane``), and each
admission unit's pass to the control process that owns its shard (docs/control-loop.md "Unit
affinity")."""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any

CONTROL_QUEUE = "celery"  # Celery's default: usage, cluster and budget tasks; every control process
WHATIF_QUEUE = "whatif"
WHATIF_TASKS = ("playground.run",)  # playground runs, /api/v1/simulations/ runs among them
ADMISSION_PASS_TASK = "queues.admission_pass"
SHARD_QUEUE_PREFIX = "control."  # control.0 .. control.N-1: one control process each
MAX_CONTROL_PROCESSES = 64


def shard_queue(shard: int) -> str:
    return f"{SHARD_QUEUE_PREFIX}{shard}"


def shard_queues(processes: int) -> list[str]:
    return [shard_queue(shard) for shard in range(processes)]


def hashed_shard(unit_key: str, processes: int) -> int:
    """A shard from the unit key alone, the same in every process (CRC-32, not the salted ``hash``):
    used when the sender did not name the shard (a message without one)."""
    return zlib.crc32(unit_key.encode()) % processes


class ControlRouter:
    """Celery router (``task_routes``): what-if tasks to ``whatif``; an admission pass to the queue
    of its shard, ``control.<shard % CONTROL_LOOP_PROCESSES>``, where ``shard`` is the task's
    keyword argument (the sender's rank of the unit: ``queues.services.pass_requests``) or else
    the unit key's hash; everything else to Celery's default queue, ``celery``. The number of
    processes is read from the settings at each send (the same in every process)."""

    @property
    def processes(self) -> int:
        from django.conf import settings

        return int(settings.CONTROL_LOOP_PROCESSES)

    def __call__(
        self, name: str, args: Sequence[Any] | None, kwargs: Mapping[str, Any] | None, options: Any, *_: Any, **__: Any
    ) -> dict[str, str] | None:
        if name in WHATIF_TASKS:
            return {"queue": WHATIF_QUEUE}
        if name != ADMISSION_PASS_TASK:
            return None
        shard = (kwargs or {}).get("shard")
        if not isinstance(shard, int):
            unit = (kwargs or {}).get("unit") or (args[0] if args else None)
            if not isinstance(unit, str):
                return None
            shard = hashed_shard(unit, self.processes)
        return {"queue": shard_queue(shard % self.processes)}


def task_routes() -> tuple[ControlRouter]:
    return (ControlRouter(),)


def whatif_annotations(soft_time_limit: int, time_limit: int) -> dict[str, dict[str, int]]:
    """Celery task options of every what-if task: the soft limit raises in the task (the run is
    marked failed), the hard one kills the process (the reaper fails the run)."""
    return {name: {"soft_time_limit": soft_time_limit, "time_limit": time_limit} for name in WHATIF_TASKS}


def beat_schedule(
    *,
    sampling_interval_seconds: int,
    admission_pass_seconds: int,
    cluster_tick_seconds: int,
    retention_seconds: int = 3600,
    budget_seconds: int = 60,
    whatif_reaper_seconds: int = 60,
    webhook_sweep_seconds: int = 60,
) -> dict[str, dict[str, Any]]:
    """Each entry expires after one period: after a broker outage, stale ticks are dropped
    instead of running in a burst (the next tick does the same work)."""

    def every(task: str, seconds: int) -> dict[str, Any]:
        return {"task": task, "schedule": float(seconds), "options": {"expires": float(seconds)}}

    return {
        "admission-passes": every("queues.schedule_admission_passes", admission_pass_seconds),
        "usage-sample": every("queues.sample_usage", sampling_interval_seconds),
        "cluster-sync": every("queues.sync_cluster", cluster_tick_seconds),
        "usage-series-retention": every("queues.prune_usage_series", retention_seconds),
        "budgets": every("budgets.reconcile_budgets", budget_seconds),
        "idempotency-keys": every("queues.prune_idempotency_keys", retention_seconds),
        "whatif-reaper": every("fairportal.reap_stuck_whatif_runs", whatif_reaper_seconds),
        "whatif-retention": every("fairportal.prune_whatif_runs", retention_seconds),
        "webhook-sweep": every("core.sweep_webhooks", webhook_sweep_seconds),
    }
