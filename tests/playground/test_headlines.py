"""Issue 25, playground headlines: every card says what it is over, utilisation and waits come
with "while contended" figures beside the whole-run ones, and a budget row compares like with
like (both sides from the replay, one time base; today's live forecast apart)."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
import yaml
from django.urls import reverse
from django.utils import timezone

from budgets.models import Budget
from budgets.services import reconcile_budget
from core.access import access_for
from fairshare.simulation.scenario import parse_scenario
from fairshare.simulation.simulator import simulate
from playground import compare
from playground.live_export import LiveOptions
from playground.models import Run
from playground.services import runs
from playground.services.scenarios import create_from_document, create_from_live
from queues import services as queue_services
from tests.playground.clusters import volcano_cluster

# Three full-cluster jobs queue behind each other from 00:00 to 02:00 (b waits 1 h, c 1 h 50 min),
# then three small jobs at 05:00, 06:00 and 07:00 find the cluster idle; the run lasts 10 h.
SCENARIO = """
name: busy-then-idle
clock: {horizon: 10h, tick: 30m}
policy: {usageHalfLifeTime: 1h, usageSamplingInterval: 5m}
resourceFlavors: [{name: default}]
clusterQueues:
  - name: cq
    quotas: [{flavor: default, resources: {cpu: {nominal: 4}}}]
localQueues:
  - {name: a/main, clusterQueue: cq}
workloads:
  - {name: a, localQueue: a/main, submitAt: 0s, duration: 1h, podSets: [{count: 1, requests: {cpu: "4"}}]}
  - {name: b, localQueue: a/main, submitAt: 0s, duration: 1h, podSets: [{count: 1, requests: {cpu: "4"}}]}
  - {name: c, localQueue: a/main, submitAt: 10m, duration: 1h, podSets: [{count: 1, requests: {cpu: "4"}}]}
  - {name: d, localQueue: a/main, submitAt: 5h, duration: 1h, podSets: [{count: 1, requests: {cpu: "1"}}]}
  - {name: e, localQueue: a/main, submitAt: 6h, duration: 1h, podSets: [{count: 1, requests: {cpu: "1"}}]}
  - {name: f, localQueue: a/main, submitAt: 7h, duration: 1h, podSets: [{count: 1, requests: {cpu: "1"}}]}
"""
EDIT = "clusterQueues.cq.quotas.default.cpu.nominal=12"  # three times the CPUs: nobody waits


def document() -> dict:
    return yaml.safe_load(SCENARIO)


def simulated(edits: list[str] | None = None) -> dict:
    from playground import documents

    if edits:
        return simulate(documents.apply_edits(document(), edits)[1])
    return simulate(parse_scenario(document()))


def test_given_a_busy_start_and_an_idle_rest_then_contention_figures_are_over_the_busy_interval_only():
    figures = compare.contention(simulated())

    assert figures["available"] is True
    assert (figures["seconds"], figures["fraction"], figures["intervals"]) == (7200, 0.2, 1)
    assert figures["utilization"] == {"cpu": 1.0}
    # Submitted while contended: a (0 s), b (1 h) and c (1 h 50 min); d, e, f came to an idle cluster.
    assert figures["waitSeconds"] == {"count": 3, "p50": 3600, "p95": 6600}


def test_given_the_comparison_then_every_card_has_a_scope_and_utilisation_and_waits_have_contended_figures():
    baseline, edited = simulated(), simulated([EDIT])

    kpis = {row["key"]: row for row in compare.kpis(baseline, edited, [])}

    assert {key: row["scope"] for key, row in kpis.items()} == {
        "jainIndex": "run",
        "utilization.cpu": "run",
        "wait.p50": "submitted",
        "wait.p95": "submitted",
        "finished": "end",
        "pending": "end",
        "evictions": "run",
    }
    utilisation = kpis["utilization.cpu"]
    # Whole run: 15 CPU-hours over 4 CPUs x 10 h; while contended the 4 CPUs were all busy.
    assert (utilisation["baseline"], utilisation["contended"]["baseline"]) == (0.375, 1.0)
    # Edited: 12 CPUs, nothing ever waits: no contended time, so no figure over it.
    assert (utilisation["edited"], utilisation["contended"]["edited"]) == (0.125, None)
    wait = kpis["wait.p50"]
    assert (wait["baseline"], wait["contended"]["baseline"], wait["contended"]["edited"]) == (0, 3600, None)
    assert "contended" not in kpis["jainIndex"]


def test_given_results_without_contention_then_the_cards_have_no_contended_figures():
    baseline, edited = simulated(), simulated([EDIT])
    for result in (baseline, edited):
        del result["summary"]["contention"]  # a run stored before the simulator reported it

    kpis = {row["key"]: row for row in compare.kpis(baseline, edited, [])}

    assert compare.contention(baseline) == {"available": False}
    assert "contended" not in kpis["utilization.cpu"] and "contended" not in kpis["wait.p50"]


def _result(*, held_at: float | None, used: float, rate: float, end: float = 30 * 3600) -> dict:
    events = [{"t": held_at, "type": "held", "budget": "team-hours"}] if held_at is not None else []
    budgets = [{"budget": "team-hours", "allocatedHours": 40, "usedHours": used, "burnRatePerHour": rate}]
    return {"events": events, "summary": {"endSeconds": end, "budgets": budgets}}


def test_given_one_side_runs_out_in_the_replay_and_the_other_after_it_then_both_are_in_the_replays_time_base():
    baseline = _result(held_at=20 * 3600, used=40, rate=2)  # ran out at +20 h
    edited = _result(held_at=None, used=30, rate=1)  # 10 h left at 1/h when the 30 h replay ends: +40 h

    (row,) = compare.budget_rows(["team-hours"], baseline, edited)

    assert row["baselineSide"] == {"outcome": "exhausted", "at": 20 * 3600, "end": 30 * 3600}
    assert row["editedSide"] == {"outcome": "forecast", "at": 40 * 3600, "end": 30 * 3600}
    assert (row["shift"], row["shiftKind"]) == (20 * 3600, "forecast")


def test_given_a_budget_that_stops_burning_then_its_side_says_never_not_a_time():
    (row,) = compare.budget_rows(
        ["team-hours"], _result(held_at=None, used=10, rate=0), _result(held_at=None, used=10, rate=0)
    )

    assert row["baselineSide"] == row["editedSide"] == {"outcome": "never", "at": None, "end": 30 * 3600}
    assert row["shift"] is None


# --- the page ------------------------------------------------------------------------------------


def _cards(body: str) -> dict[str, str]:
    """``data-kpi`` cards of the run page: key -> the card's text, tags stripped."""
    found = {}
    for key, html in re.findall(r'data-kpi="([^"]+)">(.*?)\n  </div>', body, flags=re.S):
        found[key] = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()
    return found


@pytest.mark.django_db
def test_given_a_finished_run_then_each_card_says_what_it_is_over_and_shows_the_contended_figures(
    client, admin, no_broker
):
    scenario = create_from_document(document(), owner=admin)
    run = runs.execute_run(runs.start_run(scenario, edits=[EDIT], owner=admin).pk)
    assert run.status == Run.Status.SUCCEEDED, run.error
    client.force_login(admin)

    body = client.get(reverse("playground:run", args=[run.pk])).content.decode()

    cards = _cards(body)
    assert "averaged over the 10 h simulation" in cards["utilization.cpu"]
    assert "while contended: 100.0% → —" in cards["utilization.cpu"]
    assert "every workload submitted in the 10 h simulation" in cards["wait.p50"]
    assert "while contended: 1 h → —" in cards["wait.p50"]
    assert "at the end of the 10 h simulation" in cards["pending"]
    assert all("simulation" in text for text in cards.values())
    contention = re.sub(r"\s+", " ", body.split('id="contention">')[1].split("</p>")[0])
    assert "2 h of the baseline (20%)" in contention and "0 s of the edited run (0%)" in contention


@pytest.mark.django_db
def test_given_a_run_of_todays_cluster_then_budget_rows_are_replay_only_and_the_live_status_stands_apart(
    client, admin, no_broker
):
    objects = volcano_cluster()
    lq = objects["ns1/jobs"]
    now = timezone.now()
    budget = Budget.objects.create(
        name="ns1-hours", local_queue=lq, allocated_hours=Decimal(3), anchor=now - timedelta(days=1)
    )
    for index in range(4):
        queue_services.submit_workload(
            local_queue=lq,
            name=f"job-{index}",
            pod_sets=[{"count": 1, "requests": {"cpu": "2"}}],
            duration_seconds=7200,
        )
    from queues.admission import load as snapshot
    from queues.admission import passes as admission

    admission.run_admission_pass(snapshot.unit_for_cluster_queue(objects["q1"].pk).key, now=now - timedelta(hours=1))
    reconcile_budget(budget.pk, now=now)
    scenario = create_from_live(access_for(admin), options=LiveOptions(days=0, lookahead_seconds=6 * 3600), now=now)
    run = runs.execute_run(runs.start_run(scenario, edits=["budgets.ns1-hours.allocatedHours=30"], owner=admin).pk)
    assert run.status == Run.Status.SUCCEEDED, run.error
    client.force_login(admin)

    body = client.get(reverse("playground:run", args=[run.pk])).content.decode()

    table = body.split('id="budgets">')[1].split("</table>")[0]
    header = re.findall(r"<th scope=\"col\">([^<]+)</th>", table)
    assert header == ["Budget", "Baseline (in the replay)", "Edited (in the replay)", "Shift"]
    row = re.sub(r"<[^>]+>", " ", table.split('data-budget="ns1-hours">')[1].split("</tr>")[0])
    assert "runs out {" not in row and "Today" not in row  # no live forecast in a replay row
    start = f"{now:%b} {now.day} {now:%H:%M} UTC"
    # Baseline: 3 h allocated, 4 h used already (4 jobs for an hour): out from the replay's start.
    assert f"runs out at +0 s, {start}" in row
    # Edited: 30 h; the jobs end an hour into the 6 h replay: not within it, nor burning at its end.
    end = now + timedelta(hours=6)
    assert (
        f"not within the replay (it ends at +6 h, {end:%b} {end.day} {end:%H:%M} UTC), "
        "nor at its end-of-replay burn rate (nothing burns then)"
    ) in re.sub(r"\s+", " ", row)
    live = body.split('id="live-budgets">')[1].split("</ul>")[0]
    assert "ns1-hours" in live and "Today, on the budget pages" in body


def test_given_an_edit_that_triples_the_quota_then_each_sides_utilisation_series_is_over_its_own_capacity():
    from playground import documents

    baseline_scenario = parse_scenario(document())
    edited_scenario = documents.apply_edits(document(), [EDIT])[1]

    view = compare.compare(
        simulate(baseline_scenario),
        simulate(edited_scenario),
        capacity=compare.capacity_of(baseline_scenario),
        edited_capacity=compare.capacity_of(edited_scenario),
    )

    # Edited, a, b and c run at once from 00:10: 12 of its 12 CPUs, never 12 of the baseline's 4 (300%).
    assert max(view["series"]["baseline"]["utilization"]["cpu"]) == 1.0
    assert max(view["series"]["edited"]["utilization"]["cpu"]) == pytest.approx(1.0)
    assert all(value <= 1.0 for value in view["series"]["edited"]["utilization"]["cpu"])
