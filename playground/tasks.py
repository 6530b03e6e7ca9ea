"""Thin Celery task: the worker's side of a playground run (``services.runs.execute_run``)."""

from __future__ import annotations

from celery import shared_task

from playground.services import runs


@shared_task(name="playground.run", ignore_result=True)
def run_playground(run_id: str) -> str | None:
    run = runs.execute_run(run_id)
    return None if run is None else run.status
