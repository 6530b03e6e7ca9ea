"""Downloads of a run: the results as JSON, the per-workload comparison as CSV, scenarios as YAML."""

from __future__ import annotations

from typing import Any

from core.downloads import csv_text
from playground import documents
from playground.compare import workload_moves
from playground.models import Run

CSV_COLUMNS = (
    "workload",
    "tenant",
    "localQueue",
    "submitAt",
    "baselineStart",
    "editedStart",
    "delta",
    "baselineWait",
    "editedWait",
    "baselineState",
    "editedState",
)


def results_document(run: Run) -> dict[str, Any]:
    """Everything a run produced, in one JSON document."""
    return {
        "run": str(run.pk),
        "title": run.title,
        "scenario": {"id": str(run.scenario_id), "name": run.scenario.name},
        "edits": run.edits,
        "deltas": run.deltas,
        "environment": run.environment,
        "baseline": run.baseline.data if run.baseline else None,
        "edited": run.edited.data if run.edited else None,
        "comparison": run.comparison,
    }


def workloads_csv(run: Run) -> str:
    """One row per workload: its start in both runs and the difference (seconds from the start)."""
    rows = workload_moves(run.baseline.data, run.edited.data) if run.baseline and run.edited else []
    return csv_text(CSV_COLUMNS, rows)


def edited_yaml(run: Run) -> str:
    edited, _ = documents.apply_edits(run.scenario.document, run.edits)
    return documents.to_yaml(edited)
