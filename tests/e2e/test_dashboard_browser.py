"""The dashboard in a real Chromium: sign-in, charts with data, a weight edit with its audit row,
a tenant's scoped view, and a page refreshing itself."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from core.models import PolicyChange
from queues import services
from tests.e2e.signin import sign_in
from tests.queues.views.cluster import build_cluster

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def cluster(transactional_db, quiet_broker, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.DASHBOARD_LIVE_INTERVAL_SECONDS = 2
    return build_cluster(history_hours=3)


def trace_points(page, element_id: str) -> int:
    """Points Plotly actually drew into the chart element (0 when it drew nothing)."""
    return page.evaluate(
        """(id) => {
            const el = document.getElementById(id);
            if (!el || !el.data) return 0;
            return el.data.reduce((n, t) => n + ((t.x || t.y || []).length), 0);
        }""",
        element_id,
    )


def test_given_admin_when_signed_in_then_overview_charts_hold_data(cluster, page, screenshot):
    sign_in(page, "admin")

    page.wait_for_selector("#chart-utilisation .main-svg")
    assert page.locator("h1").inner_text() == "Cluster overview"
    for chart in ("chart-capacity", "chart-utilisation", "chart-fairness", "chart-counts"):
        page.wait_for_function("(id) => document.getElementById(id).data !== undefined", arg=chart)
        assert trace_points(page, chart) > 0, chart
    assert page.locator("#chart-utilisation .scatterlayer .trace").count() >= 1
    screenshot("admin-overview")


def test_given_admin_when_weight_edited_then_page_shows_it_and_an_audit_row(cluster, page, screenshot):
    sign_in(page, "admin")
    page.goto(reverse("queues:queue-tree"))
    screenshot("admin-queue-tree")
    page.click(f"a[href='{reverse('queues:local-queue', args=['team-a', 'train'])}']")
    page.wait_for_selector("#chart-allocation .main-svg")
    assert trace_points(page, "chart-allocation") > 0
    screenshot("admin-local-queue")

    page.click("text=Edit")
    page.fill("#id_weight", "3")
    screenshot("admin-edit-weight")
    page.click("button:has-text('Save')")

    page.wait_for_selector(".messages li.success")
    assert "weight 2 → 3" in page.locator(".messages").inner_text()
    assert page.locator("dl.facts dt:has-text('Weight') + dd").inner_text().strip() == "3"
    audit = page.locator("#recent-changes table")
    assert "weight" in audit.inner_text() and "admin" in audit.inner_text()
    screenshot("admin-after-weight-edit")
    change = PolicyChange.objects.get()
    assert (change.surface, change.after["weight"]) == ("ui", "3")

    page.goto(reverse("queues:audit-log"))
    assert "team-a/train" in page.locator("table.audit").inner_text()
    screenshot("admin-audit-log")


def test_given_bad_weight_when_submitted_in_browser_then_field_error_and_nothing_stored(cluster, page):
    sign_in(page, "admin")
    page.goto(reverse("queues:edit-local-queue", args=["team-a", "train"]))

    page.fill("#id_weight", "-2")
    page.click("button:has-text('Save')")

    assert "weight must be 0 or more" in page.locator("ul.errorlist[data-field=weight]").inner_text()
    assert not PolicyChange.objects.exists()


def test_given_tenant_when_signed_in_then_only_its_namespaces_appear(cluster, page, screenshot):
    sign_in(page, "alice")

    assert page.locator("h1").inner_text() == "Your namespaces"
    page.wait_for_selector("#chart-allocation .main-svg")
    assert trace_points(page, "chart-allocation") > 0
    body = page.locator("body").inner_text()
    assert "team-a" in body and "team-b" not in body and "team-c" not in body
    screenshot("tenant-overview")

    page.goto(reverse("queues:queue-tree"))
    tree = page.locator("table.tree").inner_text()
    assert "team-a" in tree and "team-b" not in tree and "team-c" not in tree
    screenshot("tenant-queue-tree")

    page.goto(reverse("queues:workloads") + "?state=Pending")
    table = page.locator("table.workloads").inner_text()
    assert "a-batch-0" in table and "c-huge" not in table and "another tenant's queue" in table
    screenshot("tenant-workloads-pending")

    response = page.goto(reverse("queues:local-queue", args=["team-b", "train"]))
    assert response.status == 404


def test_given_tenant_when_budget_opened_from_overview_then_its_burn_down_is_drawn(cluster, page, screenshot):
    sign_in(page, "alice")
    budgets = page.locator("#budgets")
    assert "a-gpu-hours" in budgets.inner_text() and "b-wall-time" not in budgets.inner_text()

    budgets.locator("a", has_text="a-gpu-hours").click()

    page.wait_for_selector("#burn-down .main-svg")
    assert trace_points(page, "burn-down") > 0
    screenshot("tenant-budget-burn-down")
    page.click("nav.side-nav >> text=Budgets")
    assert "b-wall-time" not in page.locator("body").inner_text()
    screenshot("tenant-budgets")


def test_given_open_queue_page_when_work_is_submitted_then_it_appears_without_reload(cluster, page):
    sign_in(page, "alice")
    page.goto(reverse("queues:local-queue", args=["team-a", "batch"]))
    page.wait_for_selector("#detail-workloads")
    assert "fresh-job" not in page.locator("#detail-workloads").inner_text()

    services.submit_workload(
        local_queue=cluster.a_batch, name="fresh-job", pod_sets=[{"count": 1, "requests": {"cpu": "1"}}]
    )

    page.wait_for_function(
        "() => document.getElementById('detail-workloads').innerText.includes('fresh-job')", timeout=10_000
    )
    # One time format in the browser too: 24-hour, the zone named (core.timefmt, static/js/time.js).
    assert re.fullmatch(
        r"updated \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", page.locator("[data-live-at]").first.inner_text()
    )
    assert page.locator("[data-live-text]").first.inner_text() == "live"
