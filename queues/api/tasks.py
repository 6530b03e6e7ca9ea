"""Celery task of the API: run a queued what-if simulation (``CELERY_IMPORTS`` loads this module)."""

from __future__ import annotations

from celery import shared_task

from queues.services import simulations


@shared_task(ignore_result=True)
def run_simulation(run_id: str) -> None:
    """Idempotent: a run already claimed by another delivery is left alone. Routed to the what-if
    queue with its time limits (``fairportal.schedule``)."""
    simulations.execute_run(run_id)
