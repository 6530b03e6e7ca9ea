"""The flat lists in a real Chromium: a header sorts from the keyboard (Tab to its link, Enter),
the sort holds on page 2, columns are chosen without JavaScript's help, and an export downloads
the filtered list."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from django.urls import reverse

from queues import services
from tests.e2e.test_dashboard_browser import sign_in
from tests.queues.views.cluster import build_cluster

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def cluster(transactional_db, quiet_broker, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cluster = build_cluster(history_hours=1)
    for index in range(30):  # more than a page of team-b's work
        services.submit_workload(
            local_queue=cluster.b_train,
            name=f"many-{index:02d}",
            priority=index % 10,
            pod_sets=[{"count": 1, "requests": {"cpu": "1"}}],
        )
    return cluster


def column_text(page, header: str) -> list[str]:
    index = page.eval_on_selector_all(
        "table.workloads thead th", f"ths => ths.findIndex(th => th.textContent.trim().startsWith({header!r}))"
    )
    return page.eval_on_selector_all(
        f"table.workloads tbody td:nth-child({index + 1})", "cells => cells.map(c => c.innerText.trim())"
    )


def test_given_the_workload_list_when_a_header_is_sorted_from_the_keyboard_then_pages_keep_the_order(
    cluster, page, screenshot
):
    sign_in(page, "admin")
    page.goto(reverse("queues:workloads") + "?namespace=team-b")

    link = page.locator("table.workloads thead th a", has_text="Priority")
    link.focus()
    assert page.evaluate("document.activeElement.textContent") == "Priority"
    page.keyboard.press("Enter")
    page.wait_for_url("**sort=-priority**")

    header = page.locator("table.workloads thead th", has=page.locator("a", has_text="Priority"))
    assert header.get_attribute("aria-sort") == "descending" and header.get_attribute("scope") == "col"
    first = [int(v) for v in column_text(page, "Priority")]
    screenshot("workloads-sorted-by-priority")
    page.locator(".pager a[rel=next]").click()
    page.wait_for_url("**page=2**")
    second = [int(v) for v in column_text(page, "Priority")]
    assert len(first) == 25 and second and first + second == sorted(first + second, reverse=True)


def test_given_the_column_form_when_columns_are_unticked_then_they_stay_hidden_on_the_next_visit(cluster, page):
    sign_in(page, "alice")
    page.goto(reverse("queues:workloads"))

    page.locator(".columns-choice summary").click()
    for name in ("requests", "reason", "queued"):
        page.locator(f".columns-form input[value={name}]").uncheck()
    page.locator(".columns-form button[type=submit]").click()
    page.wait_for_url("**columns=**")
    page.goto(reverse("queues:workloads"))

    shown = page.eval_on_selector_all("table.workloads thead th", "ths => ths.map(th => th.textContent.trim())")
    assert shown == ["Workload", "Queue", "Cluster", "State", "Priority", "Position"]


def test_given_a_filter_when_csv_export_is_clicked_then_the_download_is_that_list(cluster, page):
    sign_in(page, "bob")
    page.goto(reverse("queues:workloads") + "?priority_min=9")

    with page.expect_download() as download:
        page.locator(".exports a", has_text="CSV").click()
    rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8"))))

    assert download.value.suggested_filename == "workloads.csv"
    assert sorted(row["Workload"] for row in rows) == ["many-09", "many-19", "many-29"]
    assert {row["Namespace"] for row in rows} == {"team-b"}
