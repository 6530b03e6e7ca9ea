"""Playground benchmark: the Kueue-baseline-shaped scenario end to end through the playground.

Run as ``python bench/playground.py`` from the repository root (``make bench-playground``); it
uses the database of ``DATABASE_URL`` only to create and drop a throw-away test database of its
own (SQLite in memory when ``DATABASE_URL`` is unset), so nothing it writes stays behind.

End to end is what an admin's what-if costs: POST the scenario document to the API (validated
by the engine's loader, stored), POST a run with two edits (validated, diffed, queued), the
worker's side of the run (baseline and edited simulated, both results stored, compared), then
GET the comparison and render the run page with its figures. Machines here are noisy, so the
figures are printed next to a baseline measured in the same run: the engine alone simulating
the same scenario once (``simulate``, no database).

Target: the end-to-end what-if of 5 cohorts x 6 ClusterQueues and 15,000 workloads <= 15 s.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairportal.settings")
os.environ.setdefault("DATABASE_URL", "sqlite://:memory:")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from fairshare.simulation.scenario import load_document, parse_scenario  # noqa: E402
from fairshare.simulation.simulator import simulate  # noqa: E402
from playground.services import runs  # noqa: E402

BASELINE = os.path.join(ROOT, "tests", "scenarios", "kueue_baseline.yaml")
EDITS = [
    "clusterQueues.cq-0-0.quotas.default.cpu.nominal=40",  # one team of cohort 0 gets twice the quota
    "clusterQueues.cq-0-0.preemption.reclaimWithinCohort=Never",  # and no longer reclaims
]
TARGET_SECONDS = 15.0


def timed(step: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = step()
    return time.perf_counter() - started, value


def end_to_end(document: dict[str, Any]) -> dict[str, Any]:
    """The playground's path, timed step by step; returns the figures."""
    from django.contrib.auth import get_user_model

    admin = get_user_model().objects.create_user("bench-admin", password="bench", is_staff=True)
    api = APIClient()
    api.force_authenticate(admin)
    pages = Client()
    pages.force_login(admin)
    steps: dict[str, float] = {}

    seconds, response = timed(
        lambda: api.post("/api/v1/playground/scenarios/", {"source": "document", "document": document}, format="json")
    )
    assert response.status_code == 201, response.content[:500]
    steps["create the scenario (API)"] = seconds
    scenario_id = response.json()["id"]

    sent: list[str] = []
    runs_send, runs.send = runs.send, sent.append  # the worker's side runs below, in this process
    try:
        seconds, response = timed(
            lambda: api.post("/api/v1/playground/runs/", {"scenario": scenario_id, "edits": EDITS}, format="json")
        )
    finally:
        runs.send = runs_send
    assert response.status_code == 202, response.content[:500]
    steps["queue a run with 2 edits (API)"] = seconds
    run_id = response.json()["id"]

    seconds, run = timed(lambda: runs.execute_run(run_id))
    assert run is not None and run.status == "succeeded", run and run.error
    steps["worker: simulate both, store, compare"] = seconds
    steps["  of which the baseline simulation"] = run.baseline.seconds
    steps["  of which the edited simulation"] = run.edited.seconds

    seconds, response = timed(lambda: api.get(f"/api/v1/playground/runs/{run_id}/comparison/"))
    assert response.status_code == 200
    steps["fetch the comparison (API)"] = seconds
    seconds, response = timed(lambda: pages.get(f"/playground/runs/{run_id}/"))
    assert response.status_code == 200 and b"chart-allocation-edited" in response.content
    steps["render the run page with its figures"] = seconds
    comparison = run.comparison
    return {"steps": steps, "moved": comparison["moved"]["counts"], "kpis": comparison["kpis"], "run": run}


def main() -> None:
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        document = load_document(BASELINE)
        engine_seconds, engine_result = timed(lambda: simulate(parse_scenario(document)))
        total, figures = timed(lambda: end_to_end(document))
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    summary = engine_result["summary"]
    rows = [
        (
            f"engine alone: simulate the Kueue baseline once ({summary['workloads']['total']:,} workloads, "
            f"{summary['evictions']} evictions) (baseline)",
            engine_seconds,
            "",
        )
    ]
    rows += [(f"  {label}", seconds, "") for label, seconds in figures["steps"].items()]
    rows.append(
        ("playground end to end: create, run baseline + edited, compare, read", total, f"<= {TARGET_SECONDS:g} s")
    )
    width = max(len(label) for label, _, _ in rows)
    print(f"database: {connection.vendor}; edits: {', '.join(EDITS)}")
    print(f"{'measure'.ljust(width)}  {'seconds':>8}  {'vs engine':>9}  target")
    for label, seconds, target in rows:
        print(f"{label.ljust(width)}  {seconds:8.2f}  {seconds / engine_seconds:8.2f}x  {target}")
    moved = figures["moved"]
    print(f"moved starts: {moved['earlier']:,} earlier, {moved['later']:,} later, {moved['same']:,} unchanged")
    verdict = "OK" if total <= TARGET_SECONDS else "OVER TARGET"
    print(f"end to end {total:.2f} s against a target of {TARGET_SECONDS:g} s: {verdict}")


if __name__ == "__main__":
    main()
