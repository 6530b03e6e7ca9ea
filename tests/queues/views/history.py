"""Replay the control loop over the past few hours, so pages and charts have history to show.

The loop's own services run at past moments (admission passes, the simulated cluster,
usage samples), exactly as Celery beat would have run them, so the series is real loop output.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from queues.admission.passes import run_all_admission_passes
from queues.services.cluster import complete_due_workloads
from queues.services.usage import sample_usage


def replay_loop(*, hours: float = 2.0, step_minutes: int = 10, end: datetime | None = None) -> int:
    """Run passes, completions and samples every ``step_minutes`` up to ``end``; returns samples taken."""
    end = end or timezone.now()
    moment = end - timedelta(hours=hours)
    samples = 0
    while moment <= end:
        complete_due_workloads(now=moment)
        run_all_admission_passes(now=moment)
        samples += int(sample_usage(now=moment).sampled)
        moment += timedelta(minutes=step_minutes)
    return samples
