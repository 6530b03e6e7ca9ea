"""Each preset tells its seed's story through the playground: loaded, edited as suggested, run, compared."""

from __future__ import annotations

import itertools

import pytest

from playground.models import Run
from playground.presets import PRESETS, get_preset
from playground.services import runs
from playground.services.scenarios import create_from_preset
from tests.playground.helpers import admitted_at

pytestmark = pytest.mark.django_db


def run_preset(slug: str, owner) -> Run:
    scenario = create_from_preset(slug, owner=owner)
    run = runs.start_run(scenario, edits=list(get_preset(slug).suggested_edits), owner=owner)
    done = runs.execute_run(run.pk)
    assert done.status == Run.Status.SUCCEEDED, done.error
    return done


def test_every_preset_loads_and_names_its_seed(admin):
    for preset in PRESETS:
        scenario = create_from_preset(preset.slug, owner=admin)
        assert scenario.workload_count > 0 and scenario.preset == preset.slug
        assert preset.seed[:3] in {"000", "001", "002", "003", "004"}


def test_kep4136_the_entry_penalty_gives_one_slot_each_and_a_4x_weight_takes_both(admin, no_broker):
    run = run_preset("kep4136-entry-penalty", admin)
    assert admitted_at(run.baseline.data) == {"tenant-a/main": 1, "tenant-b/main": 1}
    assert admitted_at(run.edited.data) == {"tenant-a/main": 2}
    moved = {row["workload"]: row["delta"] for row in run.comparison["moved"]["rows"]}
    assert moved == {"a-2": -3600, "b-1": 3600}


def test_volcano_table_one_becomes_table_two_with_its_weights(admin, no_broker):
    run = run_preset("volcano-16cpu", admin)
    assert admitted_at(run.baseline.data) == {"ns1/jobs": 4, "ns2/jobs": 4, "ns3/jobs": 6, "ns4/jobs": 2}
    assert admitted_at(run.edited.data) == {"ns1/jobs": 3, "ns2/jobs": 1, "ns3/jobs": 10, "ns4/jobs": 2}


def test_kai_two_queues_alternate_with_k_one_and_never_with_k_zero(admin, no_broker):
    run = run_preset("kai-two-queues", admin)

    def turns(result):
        queues = [e["localQueue"] for e in result["events"] if e["type"] == "admitted"]
        return sum(1 for a, b in itertools.pairwise(queues) if a != b)

    assert turns(run.baseline.data) >= 4 and run.baseline.data["summary"]["evictions"] > 0
    assert turns(run.edited.data) == 0 and run.edited.data["summary"]["evictions"] == 0
    assert run.comparison["kpis"][0]["key"] == "jainIndex"
    assert (run.comparison["kpis"][0]["baseline"], run.comparison["kpis"][0]["edited"]) == (1.0, 0.5)
    assert [d["field"] for d in run.deltas] == ["kValue"] and run.deltas[0]["target"] == "environment"


def test_kep28_the_budget_holds_team_a_and_twenty_hours_hold_it_later(admin, no_broker):
    run = run_preset("kep28-budget", admin)
    [budget] = run.comparison["budgets"]
    assert budget["budget"] == "team-a-hours"
    assert 5 * 3600 < budget["baseline"] < 6 * 3600
    assert 9 * 3600 < budget["edited"] < 10 * 3600
    held = [e for e in run.baseline.data["events"] if e["type"] == "held"]
    assert [(e["localQueue"], e["action"]) for e in held] == [("team-a/main", "Hold")]
    after_hold = [
        e
        for e in run.baseline.data["events"]
        if e["type"] == "admitted" and e["t"] > budget["baseline"] and e["localQueue"] == "team-a/main"
    ]
    assert after_hold == []  # held: nothing new starts for team-a


def test_dominant_share_splits_three_to_two_and_four_to_one_with_double_weight(admin, no_broker):
    run = run_preset("dominant-share", admin)
    assert admitted_at(run.baseline.data) == {"user-a/tasks": 3, "user-b/tasks": 2}
    assert admitted_at(run.edited.data) == {"user-a/tasks": 4, "user-b/tasks": 1}


def test_bursty_tenant_full_usage_accounting_spreads_each_pass(admin, no_broker):
    # Given the bursty-tenant day, run as it is and with its suggested inPassAccounting edit
    run = run_preset("bursty-tenant", admin)
    baseline, edited = run.baseline.data, run.edited.data
    # Then Kueue's accounting flips the queue between the burst and the others every hour
    burst = baseline["series"]["allocation"]["burst/main"]["cpu"][6::6]
    assert 0 in burst and max(burst) >= 8
    # and FullUsage keeps every tenant at its quarter once the first hour's jobs are done
    for key in ("burst/main", "steady-a/main", "steady-b/main", "steady-c/main"):
        assert edited["series"]["allocation"][key]["cpu"][18::6] == [4, 4, 4, 4]
    assert edited["summary"]["jainIndex"] > baseline["summary"]["jainIndex"] + 0.03
    assert [d["field"] for d in run.deltas] == ["inPassAccounting"] and run.deltas[0]["target"] == "environment"
