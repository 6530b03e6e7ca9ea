"""Beat tasks of the what-if lane (``fairportal.whatif``); they run on the control queue, quickly."""

from __future__ import annotations

from celery import shared_task

from fairportal import whatif


@shared_task(name="fairportal.reap_stuck_whatif_runs", ignore_result=True)
def reap_stuck_whatif_runs() -> int:
    reaped = whatif.reap_stuck_runs()
    return reaped.running + reaped.queued


@shared_task(name="fairportal.prune_whatif_runs", ignore_result=True)
def prune_whatif_runs() -> int:
    return whatif.prune_finished_runs()
