"""Chart builders are pure: data in, a Plotly figure dict out; Plotly's own schema accepts them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import plotly.graph_objects as go
import pytest
from django.utils import timezone

from queues.models import AdmissionRecord, UsageSample
from queues.selectors import history
from queues.ui import charts

T0 = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
TIMES = [T0 + timedelta(minutes=5 * i) for i in range(4)]
GPU = "nvidia.com/gpu"


def valid(figure: dict) -> go.Figure:
    """Plotly validates every trace and layout property; a typo raises ValueError."""
    return go.Figure(figure)


def test_given_allocation_and_capacity_when_utilisation_drawn_then_one_ratio_line_per_resource():
    figure = charts.utilisation_figure(
        TIMES, {GPU: [0, 4000, 8000, 8000], "cpu": [0, 0, 0, 0]}, {GPU: [8000] * 4, "cpu": [32000] * 4}
    )

    valid(figure)
    assert [trace["name"] for trace in figure["data"]] == ["GPU", "CPU"]
    assert figure["data"][0]["y"] == [0, 0.5, 1.0, 1.0]
    assert figure["data"][0]["x"][0] == "2026-11-21T12:00:00+00:00"
    assert figure["layout"]["yaxis"]["tickformat"] == ".0%"


def test_given_no_samples_when_any_time_chart_drawn_then_an_empty_figure_explains_it():
    for figure in (
        charts.utilisation_figure([], {}, {}),
        charts.fairness_figure([], []),
        charts.admitted_pending_figure([], [], []),
        charts.allocation_figure([], {}, {}),
        charts.share_figure([], {}, {}, {GPU: 1000}),
    ):
        valid(figure)
        assert figure["data"] == []
        assert "No usage samples" in figure["layout"]["annotations"][0]["text"]


def test_given_series_when_allocation_drawn_then_each_resource_gets_its_panel_in_display_units():
    memory = [float(2**30 * 1000 * 64)] * 4
    figure = charts.allocation_figure(
        TIMES,
        {GPU: [4000, 4000, 8000, 8000], "memory": memory},
        {GPU: [1000.0, 2000.0, 3000.0, 4000.0]},
        entitlement={GPU: 6000.0},
        limit={GPU: [8000] * 4},
    )

    valid(figure)
    panels = {trace["yaxis"] for trace in figure["data"]}
    assert panels == {"y", "y2"}
    gpu = {trace["name"]: trace for trace in figure["data"] if trace["yaxis"] == "y"}
    assert gpu["Admitted"]["y"] == [4, 4, 8, 8]
    assert gpu["Decayed usage"]["y"] == [1, 2, 3, 4]
    assert gpu["Entitlement"]["y"] == [6, 6, 6, 6]
    assert gpu["Nominal quota"]["y"] == [8, 8, 8, 8]
    mem = next(trace for trace in figure["data"] if trace["yaxis"] == "y2")
    assert mem["y"] == [64.0] * 4
    assert "Gi" in figure["layout"]["annotations"][1]["text"]
    assert sum(1 for trace in figure["data"] if trace["showlegend"]) == len({t["name"] for t in figure["data"]})


def test_given_entitlement_when_share_drawn_then_dominant_ratios_and_a_reference_line_at_one():
    figure = charts.share_figure(
        TIMES,
        {GPU: [0, 3000, 6000, 9000], "cpu": [0, 0, 48000, 0]},
        {GPU: [0, 1000, 2000, 3000]},
        {GPU: 6000.0, "cpu": 32000.0},
    )

    valid(figure)
    admitted = figure["data"][0]["y"]
    assert admitted == [0, 0.5, 1.5, 1.5]  # cpu dominates at the third sample (48/32)
    assert figure["layout"]["shapes"][0]["y0"] == 1


def test_given_no_entitlement_when_share_drawn_then_it_says_why():
    figure = charts.share_figure(TIMES, {GPU: [1, 2, 3, 4]}, {}, {GPU: 0.0})

    assert figure["data"] == [] and "weight 0" in figure["layout"]["annotations"][0]["text"]


def test_given_capacity_rows_when_capacity_drawn_then_parts_add_up_to_the_whole():
    rows = [
        {"flavor": "a100", "resource": GPU, "capacity": 16000, "admitted": 20000, "borrowed": 4000},
        {"flavor": "default", "resource": "cpu", "capacity": 64000, "admitted": 16000, "borrowed": 0},
    ]

    figure = charts.capacity_figure(rows)

    valid(figure)
    within, borrowed, free = (trace["x"] for trace in figure["data"])
    assert within == [1.0, 0.25] and borrowed == [0.25, 0.0] and free == [0.0, 0.75]
    assert figure["layout"]["barmode"] == "stack"
    assert figure["data"][0]["y"] == ["a100 · GPU", "default · CPU"]


def test_given_counts_and_jain_values_when_drawn_then_figures_are_valid():
    valid(charts.admitted_pending_figure(TIMES, [1, 2, 3, 4], [4, 3, 2, 1]))
    figure = charts.fairness_figure(TIMES, [1.0, 0.8, None, 0.5])
    valid(figure)
    assert figure["layout"]["yaxis"]["range"] == [0, 1.05]


@pytest.mark.parametrize("resources", [["cpu"], ["memory", "cpu", GPU], ["example.com/fpga", GPU]])
def test_given_any_resources_when_colors_assigned_then_they_are_stable_and_distinct(resources):
    colors = [charts.resource_color(r, resources) for r in resources]

    assert len(set(colors)) == len(colors)
    assert colors == [charts.resource_color(r, list(reversed(resources))) for r in resources]


def test_given_a_window_when_framed_then_the_axis_shows_it_with_a_range_selector_and_zoom_along_time_only():
    figure = charts.allocation_figure(TIMES, {GPU: [1000, 2000, 2000, 1000]}, {GPU: [0, 10, 20, 30]})
    start, end = TIMES[0], TIMES[0] + timedelta(hours=9)
    change = charts.Marker(T0 + timedelta(minutes=7), "team-a/train: weight 2 → 4 (admin, 12:07)")

    framed = charts.framed(
        figure, start=start, end=end, markers=[change, charts.Marker(start - timedelta(days=1), "old")]
    )

    valid(framed)
    layout = framed["layout"]
    assert layout["xaxis"]["range"] == [start.isoformat(), end.isoformat()]
    assert layout["meta"]["window"] == layout["xaxis"]["range"]  # what "all" and double-click go back to
    labels = [button["label"] for button in layout["xaxis"]["rangeselector"]["buttons"]]
    assert labels == ["1h", "6h", "all"]  # only the steps shorter than a 9 h window
    assert layout["dragmode"] == "zoom" and layout["uirevision"]
    assert all(axis["fixedrange"] for key, axis in layout.items() if key.startswith("yaxis"))
    assert layout["margin"]["t"] >= charts.TOP_WITH_SELECTOR  # room for the selector: nothing clipped
    notes = {note["text"]: note for note in layout["annotations"]}
    assert "now" in notes and not any(text.startswith("data from") for text in notes)
    assert notes["✎"]["hovertext"] == change.text  # the change in range; the older one is left out
    lines = [shape for shape in layout["shapes"] if shape["type"] == "line"]
    assert [line["x0"] for line in lines] == [end.isoformat(), change.at.isoformat()]
    assert not [shape for shape in layout["shapes"] if shape["type"] == "rect"]  # no grey "no data" band


def test_given_a_bar_chart_by_flavor_when_framed_then_it_is_left_without_a_time_window():
    figure = charts.capacity_figure(
        [{"flavor": "a100", "resource": GPU, "capacity": 8000, "admitted": 4000, "borrowed": 0}]
    )

    framed = charts.framed(figure, start=TIMES[0], end=TIMES[-1])

    assert "rangeselector" not in framed["layout"]["xaxis"] and "meta" not in framed["layout"]


def test_given_a_page_of_figures_when_framed_together_then_every_time_chart_has_the_same_window_and_a_summary():
    window = history.fit_window(None, TIMES[0], TIMES[-1] + timedelta(minutes=20))
    figures = {
        "chart-counts": charts.admitted_pending_figure(TIMES, [1, 2, 3, 2], [4, 0, 1, 2]),
        "chart-waits": charts.wait_figure(TIMES[1:3], [60.0, 120.0], [600.0, 900.0], "15 min"),
        "chart-evictions": charts.evictions_figure(TIMES[2:3], {"Preempted": [2]}, "15 min"),
        "chart-share": charts.share_figure(TIMES, {GPU: [1000] * 4}, {GPU: [500] * 4}, {}),  # empty: no entitlement
    }

    page = charts.frame_page(figures, window)

    ranges = {key: figure["layout"]["xaxis"].get("range") for key, figure in page.items() if key != "chart-share"}
    assert set(map(tuple, ranges.values())) == {(window.start.isoformat(), window.end.isoformat())}
    assert all(figure["summary"] for figure in page.values())
    assert "No entitlement" in page["chart-share"]["summary"]
    for figure in page.values():
        valid({"data": figure["data"], "layout": figure["layout"]})


def test_given_counts_when_summarised_then_the_text_names_the_window_latest_values_and_peaks():
    figure = charts.admitted_pending_figure(TIMES, [1, 5, 3, 2], [0, 0, 7, 4])

    text = charts.summary(figure, "since 12:00 (15 min)")

    assert text.startswith("Since 12:00 (15 min).")
    assert "Admitted: 2 workloads at Nov 21 12:15 (latest), peak 5 workloads at Nov 21 12:05." in text
    assert "Pending: 4 workloads at Nov 21 12:15 (latest), peak 7 workloads at Nov 21 12:10." in text


def test_given_percent_and_per_resource_charts_when_summarised_then_values_carry_their_unit():
    utilisation = charts.utilisation_figure(TIMES, {GPU: [4000, 8000, 6000, 2000]}, {GPU: [8000] * 4})
    allocation = charts.allocation_figure(TIMES, {GPU: [1000, 3000, 2000, 2000]}, {})
    evictions = charts.evictions_figure(TIMES[:2], {"Preempted": [1, 3]}, "15 min")

    assert "GPU: 25.0% at Nov 21 12:15 (latest), peak 100.0% at Nov 21 12:05." in charts.summary(utilisation)
    assert "GPU admitted: 2 GPU at Nov 21 12:15 (latest), peak 3 GPU at Nov 21 12:05." in charts.summary(allocation)
    assert "Preempted evictions: 4 in all, most 3 at Nov 21 12:05." in charts.summary(evictions)


def test_given_capacity_bars_when_summarised_then_each_flavor_row_gets_its_parts():
    figure = charts.capacity_figure(
        [{"flavor": "a100", "resource": GPU, "capacity": 8000, "admitted": 6000, "borrowed": 2000}]
    )

    assert charts.summary(figure) == "a100 · GPU: Admitted within quota 50%, Borrowed 25%, Free 25%."


def test_given_admin_when_local_queue_opened_with_7d_then_its_charts_start_at_its_first_sample(cluster, login):
    response = login("admin").get("/namespaces/team-a/queues/train/?range=7d")

    detail = response.context["detail"]
    first = (
        UsageSample.objects.filter(kind=UsageSample.Kind.LOCAL_QUEUE, object_id=cluster.a_train.id)
        .order_by("sampled_at")
        .first()
    )
    assert detail.window.start == first.sampled_at  # the fixture has 3 h of samples: not 7 days of nothing
    for key in ("chart-allocation", "chart-share", "chart-counts", "chart-waits", "chart-evictions"):
        layout = detail.figures[key]["layout"]
        if "range" in layout.get("xaxis", {}):
            assert layout["xaxis"]["range"] == [detail.window.start.isoformat(), detail.window.end.isoformat()], key
    html = response.content.decode()
    assert 'id="chart-counts-summary"' in html and 'role="group"' in html
    assert detail.figures["chart-counts"]["summary"] in html


def test_given_admissions_older_than_the_first_sample_then_the_wait_chart_leaves_them_out_like_the_others(
    cluster, login
):
    # The demo's situation: finished history admitted the afternoon before the sampler started.
    workload = cluster.a_train.workloads.order_by("id").first()
    long_ago = timezone.now() - timedelta(hours=20)
    AdmissionRecord.objects.create(
        workload=workload,
        namespace_id=workload.namespace_id,
        local_queue_id=workload.local_queue_id,
        cluster_queue_id=cluster.cq_gpu.id,
        admitted_at=long_ago,
        ended_at=long_ago + timedelta(hours=1),
        end_reason=AdmissionRecord.EndReason.FINISHED,
    )

    detail = login("admin").get("/namespaces/team-a/queues/train/").context["detail"]

    first = UsageSample.objects.filter(kind=UsageSample.Kind.LOCAL_QUEUE, object_id=cluster.a_train.id).earliest(
        "sampled_at"
    )
    assert detail.window.start == first.sampled_at
    waits = detail.figures["chart-waits"]
    assert waits["data"], "the fixture's own admissions are in the window"
    assert all(datetime.fromisoformat(x) >= detail.window.start for trace in waits["data"] for x in trace["x"])
