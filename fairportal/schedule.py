"""Celery beat schedule, derived from the configuration (docs/design.md "Control loop"), and the
routing that keeps what-if work off the control loop's queue (``playground.services.lane``)."""

from __future__ import annotations

from typing import Any

CONTROL_QUEUE = "celery"  # Celery's default: admission, cluster, usage and budget tasks
WHATIF_QUEUE = "whatif"
WHATIF_TASKS = ("playground.run",)  # playground runs, /api/v1/simulations/ runs among them


def task_routes() -> dict[str, dict[str, str]]:
    return {name: {"queue": WHATIF_QUEUE} for name in WHATIF_TASKS}


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
