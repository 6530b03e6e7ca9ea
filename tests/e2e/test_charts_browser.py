"""Charts in a real Chromium: every time chart of a page starts where the page's data starts and
shows the same window, offers a range selector whose zoom moves every chart of the page, keeps
every label inside its plot and every plot inside its card, and has a text summary."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.urls import reverse

from queues.models import UsageSample
from tests.e2e.test_dashboard_browser import sign_in
from tests.queues.views.cluster import build_cluster

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
Kind = UsageSample.Kind

# Per chart on the page: its id, its x range and Plotly's window (layout.meta), the names of its
# range selector's buttons, its summary and its accessible name.
CHARTS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(el => ({
  id: el.id,
  range: el.layout.xaxis && el.layout.xaxis.range ? el.layout.xaxis.range.map(String) : null,
  window: el.layout.meta && el.layout.meta.window ? el.layout.meta.window : null,
  buttons: [...el.querySelectorAll('.rangeselector .button text')].map(t => t.textContent),
  summary: (document.getElementById(el.id + '-summary') || {}).textContent || '',
  role: el.getAttribute('role'),
  label: el.getAttribute('aria-label'),
}))"""

# Everything that overflows: a plot wider than its card's content box, or a text of the plot
# (tick labels, titles, legend, notes, selector buttons) outside the plot's own box.
OVERFLOWS = """() => {
  const found = [];
  let checked = 0;
  for (const el of document.querySelectorAll('.js-plotly-plot')) {
    const card = el.closest('.card');
    const style = getComputedStyle(card);
    const box = card.getBoundingClientRect();
    const left = box.left + parseFloat(style.paddingLeft) + parseFloat(style.borderLeftWidth);
    const right = box.right - parseFloat(style.paddingRight) - parseFloat(style.borderRightWidth);
    const svg = el.querySelector('.main-svg').getBoundingClientRect();
    if (svg.left < left - 0.5 || svg.right > right + 0.5) {
      found.push(`${el.id}: plot ${Math.round(svg.left)}..${Math.round(svg.right)} outside card ${Math.round(left)}..${Math.round(right)}`);
    }
    for (const text of el.querySelectorAll('svg text')) {
      if (!text.textContent.trim()) continue;
      const r = text.getBoundingClientRect();
      if (r.width === 0) continue;
      checked += 1;
      if (r.left < svg.left - 0.5 || r.right > svg.right + 0.5 || r.top < svg.top - 0.5 || r.bottom > svg.bottom + 0.5) {
        found.push(`${el.id}: "${text.textContent}" clipped`);
      }
    }
  }
  return {found, checked};
}"""


@pytest.fixture
def cluster(transactional_db, quiet_broker, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.DASHBOARD_LIVE_INTERVAL_SECONDS = 2
    return build_cluster(history_hours=3)


def first_sample(kind: str, object_id: int) -> datetime:
    sample = UsageSample.objects.filter(kind=kind, object_id=object_id).order_by("sampled_at").first()
    assert sample is not None
    return sample.sampled_at


def charts_of(page, url: str) -> list[dict]:
    page.goto(url)
    page.wait_for_function("() => [...document.querySelectorAll('.chart')].every(el => el.querySelector('.main-svg'))")
    return page.evaluate(CHARTS)


def time_charts(charts: list[dict]) -> list[dict]:
    return [chart for chart in charts if chart["window"]]


def test_given_three_hours_of_samples_when_a_queue_page_opens_then_every_chart_starts_at_its_first_sample(
    cluster, page, screenshot
):
    sign_in(page, "admin")

    charts = charts_of(page, reverse("queues:local-queue", args=["team-a", "train"]))

    timed = time_charts(charts)
    assert {chart["id"] for chart in timed} >= {"chart-allocation", "chart-share", "chart-counts"}
    windows = {tuple(chart["window"]) for chart in timed}
    assert len(windows) == 1, windows  # one window for the whole page
    ((start, _end),) = windows
    assert datetime.fromisoformat(start) == first_sample(Kind.LOCAL_QUEUE, cluster.a_train.id)
    assert all(tuple(chart["range"]) == (start, _end) for chart in timed)
    for chart in charts:
        assert chart["role"] == "group" and chart["label"], chart["id"]
        assert chart["summary"].strip(), f"{chart['id']} has no text summary"
    for chart in timed:
        assert chart["buttons"] == ["1h", "all"], chart  # a 3 h window: 1 h zoom, and back to all
    screenshot("charts-local-queue")


def test_given_a_page_of_charts_when_one_is_zoomed_then_every_chart_follows_and_all_brings_them_back(cluster, page):
    sign_in(page, "admin")
    charts = charts_of(page, reverse("queues:cluster-queue", args=["cq-gpu"]))
    window = time_charts(charts)[0]["window"]

    page.locator("#chart-counts .rangeselector .button", has_text="1h").click()
    page.wait_for_function(
        """() => [...document.querySelectorAll('.js-plotly-plot')].filter(el => el.layout.meta && el.layout.meta.window)
              .every(el => (new Date(el.layout.xaxis.range[1]) - new Date(el.layout.xaxis.range[0])) === 3600000)"""
    )
    zoomed = {tuple(chart["range"]) for chart in time_charts(page.evaluate(CHARTS))}
    assert len(zoomed) == 1  # every chart shows the same hour

    page.locator("#chart-waits .rangeselector .button", has_text="all").click()
    page.wait_for_function(
        """(w) => [...document.querySelectorAll('.js-plotly-plot')].filter(el => el.layout.meta && el.layout.meta.window)
              .every(el => new Date(el.layout.xaxis.range[0]).getTime() === new Date(w[0]).getTime())""",
        arg=window,
    )
    back = {
        tuple(datetime.fromisoformat(v.replace(" ", "T")) for v in chart["range"])
        for chart in time_charts(page.evaluate(CHARTS))
    }
    assert back == {tuple(datetime.fromisoformat(v) for v in window)}


@pytest.mark.parametrize("username", ["admin", "alice"])
def test_given_each_chart_page_at_1440_then_no_label_is_clipped_and_no_plot_is_wider_than_its_card(
    cluster, page, username
):
    sign_in(page, username)
    urls = [
        reverse("queues:home"),
        reverse("queues:local-queue", args=["team-a", "train"]),
        reverse("queues:namespace", args=["team-a"]),
    ]
    if username == "admin":
        urls += [reverse("queues:cluster-queue", args=["cq-gpu"]), reverse("queues:cohort", args=["org"])]
    urls.append(reverse("budgets:detail", args=["a-gpu-hours"]))  # the burn-down
    for url in urls:
        charts = charts_of(page, url)
        assert charts, url
        overflows = page.evaluate(OVERFLOWS)
        assert overflows["found"] == [], url
        assert overflows["checked"] > 10 * len(charts), url  # ticks, titles, legends were measured
        assert all(chart["summary"].strip() for chart in charts), url


def test_given_a_narrow_window_then_plots_still_fit_their_cards(cluster, page):
    page.set_viewport_size({"width": 1024, "height": 800})
    sign_in(page, "admin")

    charts_of(page, reverse("queues:cluster-queue", args=["cq-gpu"]))

    assert page.evaluate(OVERFLOWS)["found"] == []


def test_given_a_live_refresh_then_the_summaries_and_the_shared_window_stay(cluster, page):
    sign_in(page, "admin")
    charts_of(page, reverse("queues:home"))
    page.evaluate("() => document.getElementById('chart-counts-summary').textContent = ''")

    page.wait_for_function(
        "() => document.getElementById('chart-counts-summary').textContent.length > 0", timeout=30000
    )

    windows = {tuple(chart["window"]) for chart in time_charts(page.evaluate(CHARTS))}
    assert len(windows) == 1


def test_given_a_dark_colour_scheme_then_chart_text_and_grid_are_drawn_light(cluster, page):
    page.emulate_media(color_scheme="dark")
    sign_in(page, "admin")

    charts_of(page, reverse("queues:home"))

    inks = page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot')].map(el => [el.id, el._fullLayout.font.color])"
    )
    assert inks and all(color == "#e6e9ef" for _id, color in inks), inks


def test_given_a_finished_what_if_run_then_its_charts_share_the_replay_window_fit_and_have_summaries(
    transactional_db, settings, page, monkeypatch
):
    from playground.services import runs, scenarios
    from playground.tasks import run_playground
    from tests.factories import UserFactory

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    admin = UserFactory(username="admin", is_staff=True, password="pw-for-charts")
    scenario = scenarios.create_from_preset("volcano-16cpu", owner=admin)
    monkeypatch.setattr(runs, "send_on_commit", lambda run: None)  # no worker: the run is computed right here
    run = runs.start_run(scenario, edits=["namespaces.ns2.weight=2"], owner=admin)
    run_playground(str(run.pk))
    page.goto(reverse("login"))
    page.fill("#id_username", "admin")
    page.fill("#id_password", "pw-for-charts")
    page.click("button[type=submit]")
    page.wait_for_url("**/")

    charts = charts_of(page, reverse("playground:run", args=[run.pk]))

    timed = time_charts(charts)
    assert len(timed) == 5 and len({tuple(chart["window"]) for chart in timed}) == 1
    assert all(chart["summary"].strip() and chart["role"] == "group" for chart in charts)
    assert page.evaluate(OVERFLOWS)["found"] == []
