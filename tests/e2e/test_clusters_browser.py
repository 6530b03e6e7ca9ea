"""Clusters in a real Chromium: an admin sees two clusters with their figures on the overview
and the cluster pages, the one whose Slurm does not answer marked unreachable
(``tests.queues.two_clusters``: west is a real Slurm backend whose client tools do not exist),
and filters the workload list by cluster."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.e2e.signin import sign_in
from tests.queues.two_clusters import build_two_clusters

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def two(transactional_db, quiet_broker, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return build_two_clusters()


def test_given_two_clusters_when_an_admin_opens_the_overview_then_both_have_figures_and_west_is_unreachable(
    two, page, screenshot
):
    sign_in(page, "admin")

    table = page.locator("#clusters-table")
    table.wait_for()
    east, west = table.locator("tr[data-cluster='east']"), table.locator("tr[data-cluster='west']")
    assert east.locator("td.health").inner_text().strip() == "reachable"
    assert west.locator("td.health").inner_text().startswith("unreachable")
    assert east.locator("td.capacity").inner_text().strip() == "14 CPU"
    assert east.locator("td.admitted").inner_text().strip() == "12 CPU"
    assert east.locator("td.admitted-workloads").inner_text().strip() == "4"
    assert west.locator("td.capacity").inner_text().strip() == "4 CPU"
    assert west.locator("td.pending").inner_text().strip() == "1 · 2"
    assert page.locator("#backend-status-west").is_visible()  # the banner: admission to west's flavors paused
    screenshot("admin-overview-clusters")

    west.locator("a", has_text="west").click()
    page.wait_for_url(f"**{reverse('queues:cluster', args=['west'])}")
    assert page.locator("#cluster-health-state").inner_text().strip() == "unreachable"
    assert "squeue not found" in page.locator("#cluster-unreachable").inner_text()
    assert page.locator("#cluster-flavors").inner_text().strip() == "west-cpu"
    screenshot("admin-cluster-west")

    page.goto(reverse("queues:workloads"))
    page.select_option("#filter-cluster", "west")
    page.click("button:has-text('Filter')")
    page.wait_for_url("**cluster=west**")
    names = page.locator("table.workloads tbody tr td:first-child a").all_inner_texts()
    assert names == ["imported"]
