"""Celery beat schedule, derived from the configuration (DESIGN.md "Control loop")."""

from __future__ import annotations

from typing import Any


def beat_schedule(
    *,
    sampling_interval_seconds: int,
    admission_pass_seconds: int,
    cluster_tick_seconds: int,
    retention_seconds: int = 3600,
    budget_seconds: int = 60,
) -> dict[str, dict[str, Any]]:
    """Each entry expires after one period: after a broker outage, stale ticks are dropped
    instead of running in a burst (the next tick does the same work)."""

    def every(task: str, seconds: int) -> dict[str, Any]:
        return {"task": task, "schedule": float(seconds), "options": {"expires": float(seconds)}}

    return {
        "admission-passes": every("queues.schedule_admission_passes", admission_pass_seconds),
        "usage-sample": every("queues.sample_usage", sampling_interval_seconds),
        "simulated-cluster": every("queues.complete_due_workloads", cluster_tick_seconds),
        "usage-series-retention": every("queues.prune_usage_series", retention_seconds),
        "budgets": every("budgets.reconcile_budgets", budget_seconds),
    }
