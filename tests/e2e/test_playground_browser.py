"""The playground in a real Chromium, a real Celery worker behind it: load a preset, edit a
weight, run, watch both sides drawn, apply, and find the change in the stored policy."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.urls import reverse

from queues.models import ClusterQueue, Namespace, PolicyChange, Surface
from tests.factories import UserFactory
from tests.playground.clusters import volcano_cluster
from tests.queues.test_tasks_e2e import celery_worker  # noqa: F401 - a real worker on the test broker

pytestmark = [pytest.mark.browser, pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]
SCREENSHOTS = Path(django_settings.BASE_DIR) / "var" / "screenshots"
PASSWORD = "playground-pw"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make chromium` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # Playwright's sync API runs a loop in this thread
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server) -> Iterator[object]:
    """A fresh context; a request to anything but the live server fails the test."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000}, base_url=live_server.url)
    outside: list[str] = []

    def guard(route) -> None:
        if route.request.url.startswith(live_server.url) or route.request.url.startswith("data:"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not outside, f"pages tried to load from the internet: {outside}"
    assert not errors, f"JavaScript errors: {errors}"


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def drawn_points(page, element_id: str) -> int:
    """Points Plotly drew into a chart element (0 when it drew nothing)."""
    return page.evaluate(
        """(id) => {
            const el = document.getElementById(id);
            if (!el || !el.data) return 0;
            return el.data.reduce((n, t) => n + ((t.y || t.x || []).length), 0);
        }""",
        element_id,
    )


@pytest.fixture
def stored_volcano(transactional_db, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    volcano_cluster()
    UserFactory(username="admin", is_staff=True, password=PASSWORD)


def test_given_a_preset_when_a_weight_is_edited_run_and_applied_then_both_charts_show_and_the_policy_changes(
    stored_volcano, celery_worker, page  # noqa: F811
):
    page.goto(reverse("login") + "?next=" + reverse("playground"))
    page.fill("#id_username", "admin")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/playground/")

    page.check("#start-preset input[value='volcano-16cpu']")
    page.click("#start-preset button[type=submit]")
    page.wait_for_url("**/playground/scenarios/**")
    assert page.locator("[data-path='clusterQueues.q2.weight']").input_value() == "3"  # the preset's suggestion
    page.fill("[data-path='namespaces.ns2.weight']", "2")  # and a weight of our own
    assert page.locator("#change-count").inner_text() == "5 changed"
    screenshot(page, "playground-scenario-editor")

    page.click("#run-button")
    page.wait_for_url("**/playground/runs/**")
    page.wait_for_selector("#kpis", timeout=60_000)  # the worker ran both sides; the page reloaded itself
    for side in ("baseline", "edited"):
        page.wait_for_selector(f"#chart-allocation-{side} .main-svg")
        assert drawn_points(page, f"chart-allocation-{side}") > 0, side
        assert drawn_points(page, f"chart-usage-{side}") > 0, side
    assert drawn_points(page, "chart-waits") > 0
    assert "ClusterQueue q2 weight" in page.locator("#changes").inner_text()
    screenshot(page, "playground-run-compared")

    page.check("#apply-form input[name=confirm]")
    page.click("#apply-button")
    page.wait_for_selector("#applied")
    assert "Applied: 5 objects changed" in page.locator(".messages").inner_text()
    screenshot(page, "playground-run-applied")

    assert ClusterQueue.objects.get(name="q2").weight == 3
    assert {n.name: n.weight for n in Namespace.objects.all()} == {"ns1": 3, "ns2": 2, "ns3": 2, "ns4": 6}
    assert set(PolicyChange.objects.values_list("surface", flat=True)) == {Surface.PLAYGROUND}
