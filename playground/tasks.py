"""Celery tasks of the playground, thin: the worker's side of a playground run
(``services.runs.execute_next``) and the what-if lane's beat tasks (``services.lane``: reaper,
retention), which run on the control queue, quickly. The registered names stay as they are: the
beat schedule and the task routes (``fairportal.schedule``) name them."""

from __future__ import annotations

from celery import shared_task

from playground.services import lane, runs


@shared_task(name="playground.run", ignore_result=True)
def run_playground(run_id: str) -> str | None:
    """``run_id`` is the run whose creation sent the message; the worker runs the next run in fair
    order (``runs.execute_next``), which may be another user's: one message per queued run."""
    run = runs.execute_next()
    return None if run is None else run.status


# The registered names keep their ``fairportal.`` prefix: the beat schedule names them, and
# messages already sent carry them.
@shared_task(name="fairportal.reap_stuck_whatif_runs", ignore_result=True)
def reap_stuck_whatif_runs() -> int:
    reaped = lane.reap_stuck_runs()
    return reaped.running + reaped.queued


@shared_task(name="fairportal.prune_whatif_runs", ignore_result=True)
def prune_whatif_runs() -> int:
    return lane.prune_finished_runs()
