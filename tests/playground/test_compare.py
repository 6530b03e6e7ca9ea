"""The comparison of two runs, as pure functions over the simulator's JSON."""

from __future__ import annotations

import pytest

from playground import compare
from tests.playground.helpers import preset_view


def result(events: list[dict], workloads: dict, *, jain: float = 1.0, utilization: float = 0.5) -> dict:
    """A minimal simulator result with what the comparison reads."""
    return {
        "events": events,
        "workloads": workloads,
        "series": {
            "t": [0, 60, 120],
            "allocation": {"a/q": {"cpu": [1, 2, 2]}, "b/q": {"cpu": [1, 0, 2]}},
            "usage": {"a/q": {"cpu": [0.5, 1, 1.5]}},
            "fairShare": {},
        },
        "summary": {
            "utilization": {"cpu": utilization},
            "jainIndex": jain,
            "waitSeconds": {"p50": 0, "p95": 60},
            "perLocalQueue": {"a/q": {"submitted": 1}},
            "endSeconds": 120,
            "workloads": {"total": 2, "finished": 1, "admitted": 1, "pending": 0, "notSubmitted": 0},
            "evictions": 0,
        },
    }


def admitted(t: float, name: str, queue: str = "a/q") -> dict:
    return {"t": t, "type": "admitted", "workload": name, "localQueue": queue, "clusterQueue": "cq"}


def entry(queue: str, wait: float | None, state: str = "Finished") -> dict:
    return {"localQueue": queue, "waitSeconds": wait, "state": state, "submitAt": 0}


def test_a_workload_start_is_its_first_admission_even_after_a_preemption():
    events = [admitted(10, "w"), {"t": 20, "type": "preempted", "workload": "w"}, admitted(30, "w")]
    assert compare.first_starts({"events": events}) == {"w": 10}


def test_moves_say_how_much_earlier_or_later_each_workload_started():
    baseline = result(
        [admitted(0, "x"), admitted(60, "y"), admitted(0, "z")],
        {"x": entry("a/q", 0), "y": entry("b/q", 60), "z": entry("a/q", 0)},
    )
    edited = result(
        [admitted(30, "x"), admitted(0, "y")],
        {"x": entry("a/q", 30), "y": entry("b/q", 0), "z": entry("a/q", 120, "Pending")},
    )
    rows = {row["workload"]: row for row in compare.workload_moves(baseline, edited)}
    assert (rows["x"]["delta"], rows["y"]["delta"], rows["z"]["delta"]) == (30, -60, None)
    assert rows["y"]["tenant"] == "b"
    summary = compare.moved_summary(list(rows.values()))
    assert summary["counts"] == {"earlier": 1, "later": 1, "same": 0, "onlyBaseline": 1, "onlyEdited": 0, "neither": 0}
    # never started on one side first, then by how far the start moved
    assert [row["workload"] for row in summary["rows"]] == ["z", "y", "x"]
    assert summary["meanDelta"] == -15


def test_moved_rows_are_capped_and_the_rest_counted():
    rows = [{"workload": f"w{i}", "baselineStart": 0, "editedStart": i + 1, "delta": i + 1} for i in range(5)]
    summary = compare.moved_summary(rows, limit=2)
    assert [row["workload"] for row in summary["rows"]] == ["w4", "w3"]
    assert summary["truncated"] == 3


def test_distribution_uses_nearest_rank_like_the_simulator():
    stats = compare.distribution([10, 20, 30, 40])
    assert stats == {
        "count": 4,
        "mean": 25.0,
        "min": 10.0,
        "q1": 10.0,
        "median": 20.0,
        "q3": 30.0,
        "p95": 40.0,
        "max": 40.0,
    }
    assert compare.distribution([])["count"] == 0


def test_waits_are_grouped_by_tenant_and_unsubmitted_work_is_left_out():
    workloads = {"a1": entry("a/q", 0), "a2": entry("a/x", 100), "b1": entry("b/q", 50), "later": entry("b/q", None)}
    waits = compare.tenant_waits({"workloads": workloads})
    assert {tenant: stats["count"] for tenant, stats in waits.items()} == {"a": 2, "b": 1}
    assert waits["a"]["max"] == 100


def test_budget_rows_give_exhaustion_times_and_the_shift():
    held = {"t": 3600, "type": "held", "budget": "hours", "localQueue": "a/q"}
    later = dict(held, t=5400)
    rows = compare.budget_rows(["hours", "never"], {"events": [held]}, {"events": [later]})
    assert rows == [
        {
            "budget": "hours",
            "baseline": 3600,
            "edited": 5400,
            "delta": 1800,
            "baselineForecast": None,
            "editedForecast": None,
            "baselineSide": {"outcome": "exhausted", "at": 3600, "end": None},
            "editedSide": {"outcome": "exhausted", "at": 5400, "end": None},
            "shift": 1800,
            "shiftKind": "replay",
        },
        {
            "budget": "never",
            "baseline": None,
            "edited": None,
            "delta": None,
            "baselineForecast": None,
            "editedForecast": None,
            "baselineSide": {"outcome": "never", "at": None, "end": None},
            "editedSide": {"outcome": "never", "at": None, "end": None},
            "shift": None,
            "shiftKind": None,
        },
    ]


def test_kpis_say_which_way_is_better():
    baseline = result([], {}, jain=0.8, utilization=0.5)
    edited = result([], {}, jain=0.9, utilization=0.4)
    kpis = {k["key"]: k for k in compare.kpis(baseline, edited, [])}
    assert kpis["jainIndex"]["delta"] == 0.1 and kpis["jainIndex"]["verdict"] == "better"
    assert kpis["utilization.cpu"]["verdict"] == "worse"
    assert kpis["wait.p95"]["verdict"] is None  # unchanged
    assert "budgetsExhausted" not in kpis


def test_chart_series_sum_allocations_into_utilisation_and_thin_long_series():
    series = compare.chart_series(result([], {}), {"cpu": 4.0})
    assert series["utilization"] == {"cpu": [0.5, 0.5, 1.0]}
    assert compare.stride_indices(10, 4) == [0, 3, 6, 9]
    assert compare.stride_indices(3, 4) == [0, 1, 2]
    thin = compare.chart_series(result([], {}), {"cpu": 4.0}, max_points=2)
    assert thin["t"] == [0, 120] and thin["allocation"]["a/q"]["cpu"] == [1, 2]


def test_the_volcano_preset_comparison_moves_cpu_from_q1_to_q2():
    view = preset_view("volcano-16cpu")
    first_hour = {
        side: {key: per["cpu"][0] for key, per in view["series"][side]["allocation"].items()} for side in view["series"]
    }
    assert first_hour["baseline"] == {"ns1/jobs": 4, "ns2/jobs": 4, "ns3/jobs": 6, "ns4/jobs": 2}
    assert first_hour["edited"] == {"ns1/jobs": 3, "ns2/jobs": 1, "ns3/jobs": 10, "ns4/jobs": 2}
    waits = {row["tenant"]: row for row in view["tenants"]}
    assert waits["ns3"]["edited"]["mean"] < waits["ns3"]["baseline"]["mean"]
    assert waits["ns2"]["edited"]["mean"] > waits["ns2"]["baseline"]["mean"]
    counts = view["moved"]["counts"]
    assert counts["earlier"] > 0 and counts["later"] > 0
    assert sum(counts.values()) == 27
    assert [row["tenant"] for row in view["tenants"]] == ["ns1", "ns2", "ns3", "ns4"]
    assert set(view["series"]) == {"baseline", "edited"}


def test_the_budget_preset_comparison_reports_both_exhaustion_times():
    view = preset_view("kep28-budget")
    [row] = view["budgets"]
    assert row["budget"] == "team-a-hours"
    assert row["baseline"] < row["edited"]
    assert 3.5 * 3600 < row["delta"] < 4.5 * 3600


def test_given_changes_within_noise_then_no_verdict_is_given():
    # Utilisation 0.50000 -> 0.49996 (-0.004 pts), Jain 0.8 -> 0.8004, wait p95 1h -> 1h 20 s.
    baseline = result([], {}, jain=0.8, utilization=0.5)
    edited = result([], {}, jain=0.8004, utilization=0.49996)
    baseline["summary"]["waitSeconds"]["p95"] = 3600
    edited["summary"]["waitSeconds"]["p95"] = 3620

    kpis = {k["key"]: k for k in compare.kpis(baseline, edited, [])}

    for key in ("jainIndex", "utilization.cpu", "wait.p95"):
        assert kpis[key]["verdict"] is None and kpis[key]["noise"], key


def test_given_workloads_still_pending_at_the_end_then_the_wait_figures_say_how_many_are_censored():
    baseline = result([], {"a1": entry("a/q", 0), "a2": dict(entry("a/q", 900), state="Pending")})
    edited = result([], {"a1": entry("a/q", 0), "a2": entry("a/q", 300)})

    kpis = {k["key"]: k for k in compare.kpis(baseline, edited, [])}

    assert kpis["wait.p95"]["censored"] == {"baseline": 1, "edited": 0}


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (-0.00004, "ratio", "no change"),
        (0.0123, "ratio", "+1.2 pts"),
        (0.2, "seconds", "no change"),
        (-5400, "seconds", "−1 h 30 min"),
    ],
)
def test_given_a_tiny_difference_then_it_reads_no_change_not_minus_zero(value, unit, text):
    from playground.templatetags.playground import kpi_delta

    assert kpi_delta(value, unit) == text


def test_given_a_budget_burning_at_the_end_of_a_replay_then_its_forecast_is_the_live_pages_computation():
    # 10 of 40 hours used when the replay ends at 6 h, burning 5 per hour: 30 h left -> 6 h later.
    summary = {
        "endSeconds": 6 * 3600,
        "budgets": [
            {"budget": "team-hours", "allocatedHours": 40, "usedHours": 10, "burnRatePerHour": 5},
            {"budget": "idle", "allocatedHours": 40, "usedHours": 10, "burnRatePerHour": 0},
        ],
    }
    result = {"events": [], "summary": summary}

    [row, idle] = compare.budget_rows(["team-hours", "idle"], result, result)

    assert row["baseline"] is None and row["baselineForecast"] == 12 * 3600
    assert idle["baselineForecast"] is None  # nothing burns: no forecast, as on the budget pages
