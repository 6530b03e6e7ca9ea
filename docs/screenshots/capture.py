"""Capture the README's screenshots from a running fairportal (``make run``) at 1440x900.

    python docs/screenshots/capture.py [--base http://127.0.0.1:8000] [--out docs/screenshots] [--dark]

Signs in as the demo admin, waits for every chart to draw, saves full-page PNGs and prints,
per page, its height and any table wider than its box (horizontal overflow). Debian's
Chromium through Playwright, as the browser tests use. ``--dark`` takes them in the dark colour
scheme, as ``NAME-dark.png``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
OVERFLOW = """() => [...document.querySelectorAll('table')]
    .filter(t => t.offsetParent && (t.parentElement.scrollWidth > t.parentElement.clientWidth + 1
                                    || t.getBoundingClientRect().right > document.documentElement.clientWidth))
    .map(t => (t.id || t.className) + ' ' + t.parentElement.scrollWidth + '>' + t.parentElement.clientWidth)"""


def pending_workload(page) -> str:
    """The first pending workload in queue order of the LocalQueue shown (team-vision/training)."""
    page.goto("/workloads/?state=Pending&sort=position&local_queue=team-vision/training")
    return page.locator("table.workloads tbody tr td a").first.get_attribute("href")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="http://127.0.0.1:8000")
    parser.add_argument("--out", default=str(Path(__file__).parent))
    parser.add_argument("--user", default="admin")
    parser.add_argument("--all", action="store_true", help="every page, not only the README's three")
    parser.add_argument("--dark", action="store_true", help="the dark colour scheme (prefers-color-scheme: dark)")
    options = parser.parse_args()
    out = Path(options.out)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_context(
            viewport={"width": 1440, "height": 900},
            base_url=options.base,
            color_scheme="dark" if options.dark else "light",
        ).new_page()
        page.goto("/accounts/login/")
        page.fill("#id_username", options.user)
        page.fill("#id_password", options.user)
        page.click("button[type=submit]")
        page.wait_for_url("**/")
        pages = {
            "overview": "/",
            "local-queue": "/namespaces/team-vision/queues/training/",
            "pending-workload": pending_workload(page),
        }
        if options.all:
            pages.update(
                {
                    "tree": "/queues/",
                    "workloads": "/workloads/",
                    "budgets": "/budgets/",
                    "cluster-queue": "/queues/cluster-queues/gpu-training/",
                    "cohort": "/queues/cohorts/org/",
                    "namespace": "/namespaces/team-vision/",
                    "flavors": "/queues/flavors/",
                    "audit": "/audit/",
                    "playground": "/playground/",
                    "submit-workload": "/namespaces/team-vision/queues/training/submit/",
                    "edit-cluster-queue": "/queues/cluster-queues/gpu-training/edit/",
                    "add-cluster-queue": "/queues/cluster-queue/add/",
                    "delete-refused": "/queues/flavors/a100/delete/",
                }
            )
        for name, url in pages.items():
            page.goto(url)
            page.wait_for_load_state("networkidle")
            page.wait_for_function(
                "() => [...document.querySelectorAll('.chart')].every(el => el.querySelector('.main-svg'))"
            )
            if page.locator("#estimate").count():
                page.wait_for_selector("#estimate-result:not([data-state=busy])", timeout=60_000)
            height = page.evaluate("() => document.documentElement.scrollHeight")
            print(f"{name:18} {url:48} {height:6} px  overflow: {page.evaluate(OVERFLOW) or 'none'}")
            page.screenshot(path=str(out / f"{name}{'-dark' if options.dark else ''}.png"), full_page=True)
        browser.close()


if __name__ == "__main__":
    main()
