"""Figures of a comparison, as data: what is drawn, in which colour, on which axes."""

from __future__ import annotations

import pytest

from playground import charts
from tests.playground.helpers import preset_view


@pytest.fixture(scope="module")
def volcano() -> dict:
    return preset_view("volcano-16cpu")


@pytest.fixture(scope="module")
def kai() -> dict:
    return preset_view("kai-two-queues")


def test_allocation_pair_stacks_every_queue_with_the_same_colour_and_y_range_on_both_sides(volcano):
    pair = charts.allocation_pair(volcano, "cpu")
    assert set(pair) == {"baseline", "edited"}
    names = {side: [trace["name"] for trace in figure["data"]] for side, figure in pair.items()}
    assert names["baseline"] == names["edited"] == ["ns1/jobs", "ns2/jobs", "ns3/jobs", "ns4/jobs"]
    colours = {side: [trace["line"]["color"] for trace in figure["data"]] for side, figure in pair.items()}
    assert colours["baseline"] == colours["edited"]
    assert pair["baseline"]["layout"]["yaxis"]["range"] == pair["edited"]["layout"]["yaxis"]["range"]
    assert pair["baseline"]["layout"]["yaxis"]["range"][1] == pytest.approx(16 * 1.05)
    assert all(trace["stackgroup"] == "one" for trace in pair["edited"]["data"])
    first = {trace["name"]: trace["y"][0] for trace in pair["edited"]["data"]}
    assert first == {"ns1/jobs": 3, "ns2/jobs": 1, "ns3/jobs": 10, "ns4/jobs": 2}


def test_short_runs_are_drawn_in_minutes_long_ones_in_hours(volcano, kai):
    assert (
        charts.allocation_pair(volcano, "cpu")["baseline"]["layout"]["xaxis"]["title"]["text"]
        == "minutes from the start"
    )
    assert charts.allocation_pair(kai, "nvidia.com/gpu")["baseline"]["layout"]["xaxis"]["title"]["text"] == (
        "hours from the start"
    )


def test_more_queues_than_the_limit_are_summed_into_others(volcano, monkeypatch):
    monkeypatch.setattr(charts, "MAX_QUEUES", 2)
    pair = charts.allocation_pair(volcano, "cpu")
    names = [trace["name"] for trace in pair["baseline"]["data"]]
    assert names == ["ns2/jobs", "ns3/jobs", "others"]


def test_usage_pair_draws_fair_shares_dotted_where_the_mode_has_them(kai):
    pair = charts.usage_pair(kai, "nvidia.com/gpu")
    dashes = {trace["name"]: trace["line"]["dash"] for trace in pair["baseline"]["data"]}
    assert dashes["team-a/train"] == "solid"
    assert dashes["team-a/train fair share"] == "dot"


def test_wait_figure_has_precomputed_boxes_per_tenant_for_both_sides(volcano):
    figure = charts.wait_figure(volcano)
    assert [trace["name"] for trace in figure["data"]] == ["Baseline", "Edited"]
    baseline = figure["data"][0]
    assert baseline["type"] == "box" and baseline["x"] == ["ns1", "ns2", "ns3", "ns4"]
    assert set(baseline) >= {"q1", "median", "q3", "lowerfence", "upperfence", "mean"}
    assert figure["layout"]["boxmode"] == "group"
    assert figure["layout"]["yaxis"]["title"]["text"] == "wait (minutes)"


def test_utilisation_overlays_both_sides(kai):
    figure = charts.utilization_figure(kai)
    assert [trace["name"] for trace in figure["data"]] == ["Baseline nvidia.com/gpu", "Edited nvidia.com/gpu"]
    assert figure["layout"]["yaxis"]["tickformat"] == ".0%"


def test_moved_figure_counts_earlier_and_later_starts(volcano):
    figure = charts.moved_figure(volcano)
    shown = {trace["name"]: trace["x"][0] for trace in figure["data"]}
    assert shown["earlier"] == volcano["moved"]["counts"]["earlier"]
    assert "in neither" not in shown


def test_all_figures_name_the_element_ids_of_the_page(volcano):
    figures = charts.all_figures(volcano)
    assert set(figures) == {
        "chart-utilization",
        "chart-waits",
        "chart-moved",
        "chart-allocation-baseline",
        "chart-allocation-edited",
        "chart-usage-baseline",
        "chart-usage-edited",
    }
    assert charts.default_resource(volcano) == "cpu"


def test_an_empty_run_draws_notes_instead_of_axes():
    view = {
        "series": {
            "baseline": {"t": [], "allocation": {}, "usage": {}, "fairShare": {}, "utilization": {}},
            "edited": {"t": [], "allocation": {}, "usage": {}, "fairShare": {}, "utilization": {}},
        },
        "end": {"baseline": 0, "edited": 0},
        "tenants": [],
        "utilization": {},
        "moved": {"counts": {"earlier": 0}},
    }
    figures = charts.all_figures(view)
    assert all(figure["data"] == [] for figure in figures.values())
    assert figures["chart-waits"]["layout"]["annotations"][0]["text"] == "No workloads were submitted"


def test_time_charts_of_a_run_share_one_window_from_its_start_to_its_end_and_zoom_along_time_only(volcano):
    figures = charts.all_figures(volcano)
    end = max(volcano["end"].values()) / 60  # a short run: minutes

    timed = {key: figure for key, figure in figures.items() if "meta" in figure["layout"]}

    assert set(timed) == {
        "chart-utilization",
        "chart-allocation-baseline",
        "chart-allocation-edited",
        "chart-usage-baseline",
        "chart-usage-edited",
    }
    for figure in timed.values():
        layout = figure["layout"]
        assert layout["xaxis"]["range"] == layout["meta"]["window"] == [0, pytest.approx(end)]
        assert layout["yaxis"]["fixedrange"] is True and layout["dragmode"] == "zoom"


def test_every_figure_of_a_run_has_a_text_summary_in_the_run_s_own_units(volcano):
    figures = charts.all_figures(volcano)

    assert all(figure["summary"] for figure in figures.values())
    assert " min" in figures["chart-usage-edited"]["summary"]  # times as minutes from the start
    assert figures["chart-waits"]["summary"].startswith("Baseline, median: ns1 ")
    assert figures["chart-moved"]["summary"].startswith("starts: ")
