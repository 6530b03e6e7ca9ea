"""At 1440x900 in a real Chromium: the main tables of every page fit (no horizontal scrolling),
every surface names the same state for each budget, the tree collapses and sorts, and a pending
workload shows its estimated start."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from budgets.models import Budget
from budgets.services import reconcile_all_budgets
from tests.e2e.test_dashboard_browser import sign_in
from tests.queues.views.cluster import build_cluster

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Every visible table whose box is wider than the box it sits in (its scroll container), or
# whose right edge passes the window: what makes a reader scroll sideways.
OVERFLOWING_TABLES = """() => [...document.querySelectorAll('main table')]
  .filter(t => t.offsetParent !== null)
  .filter(t => t.parentElement.scrollWidth > t.parentElement.clientWidth + 1
               || t.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
  .map(t => `${t.id || t.className}: ${t.parentElement.scrollWidth} > ${t.parentElement.clientWidth}`)"""


@pytest.fixture
def cluster(transactional_db, quiet_broker, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return build_cluster(history_hours=3)


def pages_of(cluster) -> list[str]:
    pending = cluster.a_train.workloads.filter(state="Pending").order_by("id").first()
    return [
        reverse("queues:home"),
        reverse("queues:queue-tree"),
        reverse("queues:flavors"),
        reverse("queues:flavor", args=["a100"]),
        reverse("queues:cohort", args=["org"]),
        reverse("queues:cluster-queue", args=["cq-gpu"]),
        reverse("queues:namespace", args=["team-a"]),
        reverse("queues:local-queue", args=["team-a", "train"]),
        reverse("queues:workloads"),
        reverse("queues:workloads") + "?state=Pending",
        reverse("queues:workload", args=["team-a", pending.name]),
        reverse("budgets:list"),
        reverse("budgets:detail", args=["a-gpu-hours"]),
        reverse("queues:audit-log"),
    ]


def test_given_1440x900_when_each_page_opens_then_no_main_table_scrolls_sideways(cluster, page, screenshot):
    assert page.viewport_size == {"width": 1440, "height": 900}
    sign_in(page, "admin")

    overflowing = {}
    for url in pages_of(cluster):
        page.goto(url)
        page.wait_for_load_state("networkidle")
        found = page.evaluate(OVERFLOWING_TABLES)
        if found:
            overflowing[url] = found
    screenshot("layout-last-page")

    assert not overflowing, overflowing


def test_given_a_tenant_at_1440x900_then_its_pages_fit_too(cluster, page):
    sign_in(page, "alice")

    overflowing = {}
    for url in (
        reverse("queues:home"),
        reverse("queues:queue-tree"),
        reverse("queues:local-queue", args=["team-a", "train"]),
        reverse("queues:workloads") + "?state=Pending",
        reverse("queues:flavors"),
    ):
        page.goto(url)
        page.wait_for_load_state("networkidle")
        found = page.evaluate(OVERFLOWING_TABLES)
        if found:
            overflowing[url] = found

    assert not overflowing, overflowing


def _states(page) -> dict[str, str]:
    return {
        element.get_attribute("data-budget-state"): element.inner_text().strip()
        for element in page.locator("[data-budget-state]").all()
    }


def test_given_budgets_in_every_state_then_overview_list_and_budget_pages_show_the_same_one(cluster, page):
    # Given: a-gpu-hours at 85% of a lowered allocation with its work running (forecast to run out
    # before it resets: at risk), b-wall-time left as it is.
    budget = Budget.objects.get(name="a-gpu-hours")
    reconcile_all_budgets()
    used = budget.state.used_unit_seconds / Decimal(3600)
    budget.allocated_hours = (used / Decimal("0.85")).quantize(Decimal("0.001"))
    budget.save()
    reconcile_all_budgets()
    sign_in(page, "admin")

    # When: the three surfaces are read in the browser.
    page.goto(reverse("queues:home"))
    overview = _states(page)
    page.goto(reverse("budgets:list"))
    listing = _states(page)
    pages = {}
    for name in Budget.objects.order_by("name").values_list("name", flat=True):
        page.goto(reverse("budgets:detail", args=[name]))
        pages.update(_states(page))

    # Then
    assert set(overview) == set(Budget.objects.values_list("name", flat=True))
    assert overview == listing == pages
    assert overview["a-gpu-hours"] == "at risk"


def test_given_the_tree_when_a_cluster_queue_is_collapsed_and_a_column_sorted_then_rows_follow(cluster, page):
    sign_in(page, "admin")
    page.goto(reverse("queues:queue-tree"))
    cq_row = page.locator("tr[data-node$='/cq-cq-gpu']")
    node = cq_row.get_attribute("data-node")
    children = page.locator(f"tr[data-parent^='{node}']")
    assert children.count() > 0 and children.first.is_visible()

    cq_row.locator("[data-toggle]").click()
    assert all(not row.is_visible() for row in children.all())
    page.reload()  # remembered for the page
    assert all(not row.is_visible() for row in page.locator(f"tr[data-parent^='{node}']").all())
    page.locator("tr[data-node$='/cq-cq-gpu'] [data-toggle]").click()

    page.locator("th[data-sort]", has_text="Usage score").click()
    scores = [
        float(v)
        for v in page.eval_on_selector_all(
            "tr.lvl-localQueue td[data-v]:nth-child(7)", "cells => cells.map(c => c.getAttribute('data-v'))"
        )
        if v
    ]
    parents = page.eval_on_selector_all("tr.lvl-namespace", "rows => rows.map(r => r.getAttribute('data-parent'))")
    assert scores and len(parents) > 1
    assert page.locator("th[aria-sort]").count() == 1


def test_given_a_pending_workload_page_then_its_estimated_start_and_assumptions_appear(cluster, page, screenshot):
    pending = cluster.a_train.workloads.filter(state="Pending").order_by("id").first()
    sign_in(page, "alice")

    page.goto(reverse("queues:workload", args=["team-a", pending.name]))

    page.wait_for_selector("#estimate-result:not([data-state=busy])", timeout=30_000)
    state = page.locator("#estimate-result").get_attribute("data-state")
    assert state in ("at", "beyond")
    text = page.locator("#estimate").inner_text()
    assert re.search(r"Estimated start", text) and "Assumptions of the estimate" in text
    screenshot("tenant-pending-workload")
