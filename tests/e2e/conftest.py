"""Browser tests: Playwright (sync API) drives Debian's Chromium against pytest-django's live server.

Screenshots go to ``var/screenshots/`` (git-ignored). Playwright's sync API runs an event loop in
the test thread, so Django's async-unsafe guard is lifted for these tests only; the live server
needs ``transactional_db``, so each test builds its own small cluster.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings as django_settings

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(django_settings.BASE_DIR) / "var" / "screenshots"


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make chromium` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server) -> Iterator[object]:
    """A fresh browser context per test; requests to anything but the live server fail the test."""
    context = browser.new_context(viewport={"width": 1440, "height": 900}, base_url=live_server.url)
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
    refused: list[str] = []  # the Content-Security-Policy refused a script, style or eval
    page.on(
        "console",
        lambda message: refused.append(message.text[:300]) if "Content Security Policy" in message.text else None,
    )
    yield page
    context.close()
    assert not outside, f"pages tried to load from the internet: {outside}"
    assert not errors, f"JavaScript errors: {errors}"
    assert not refused, f"Content-Security-Policy violations: {refused}"


@pytest.fixture
def screenshot(page):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(name: str) -> Path:
        """Full-page screenshot once every chart on the page is drawn."""
        page.wait_for_function(
            "() => [...document.querySelectorAll('.chart')].every(el => el.querySelector('.main-svg'))"
        )
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


@pytest.fixture
def quiet_broker(monkeypatch) -> None:
    """Submissions enqueue an admission pass after commit; these tests run the loop themselves."""
    from queues import tasks

    monkeypatch.setattr(tasks.admission_pass, "delay", lambda *args, **kwargs: None)
