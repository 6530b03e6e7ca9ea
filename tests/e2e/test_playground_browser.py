"""The playground in a real Chromium, a real Celery worker behind it: load a preset, edit a
weight, run, watch both sides drawn, apply, and find the change in the stored policy; move a
ClusterQueue's GPUs to another cluster and read the comparison per cluster.

Browser, page (no requests leave the live server, no JavaScript errors) and screenshots come
from ``tests/e2e/conftest.py``."""

from __future__ import annotations

import pytest
from django.urls import reverse

from core.models import PolicyChange, Surface
from playground.services.scenarios import create_from_document
from queues.models import ClusterQueue, Namespace
from tests.e2e.signin import sign_in
from tests.factories import UserFactory
from tests.playground.clusters import two_clusters_document, volcano_cluster
from tests.queues.test_tasks_e2e import celery_worker  # noqa: F401 - a real worker on the test broker

pytestmark = [pytest.mark.browser, pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

PASSWORD = "playground-pw"


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
    stored_volcano, celery_worker, page, screenshot
):
    page.goto(reverse("login") + "?next=" + reverse("playground:index"))
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
    screenshot("playground-scenario-editor")

    page.click("#run-button")
    page.wait_for_url("**/playground/runs/**")
    page.wait_for_selector("#kpis", timeout=60_000)  # the worker ran both sides; the page reloaded itself
    for side in ("baseline", "edited"):
        page.wait_for_selector(f"#chart-allocation-{side} .main-svg")
        assert drawn_points(page, f"chart-allocation-{side}") > 0, side
        assert drawn_points(page, f"chart-usage-{side}") > 0, side
    assert drawn_points(page, "chart-waits") > 0
    assert "ClusterQueue q2 weight" in page.locator("#changes").inner_text()
    screenshot("playground-run-compared")

    page.check("#apply-form input[name=confirm]")
    page.click("#apply-button")
    page.wait_for_selector("#applied")
    assert "Applied: 5 objects changed" in page.locator(".messages").inner_text()
    screenshot("playground-run-applied")

    assert ClusterQueue.objects.get(name="q2").weight == 3
    assert {n.name: n.weight for n in Namespace.objects.all()} == {"ns1": 3, "ns2": 2, "ns3": 2, "ns4": 6}
    assert set(PolicyChange.objects.values_list("surface", flat=True)) == {Surface.PLAYGROUND}


def test_given_two_clusters_when_a_queues_gpus_are_moved_to_the_new_one_then_the_run_compares_per_cluster(
    transactional_db, settings, celery_worker, page, screenshot
):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    admin = UserFactory(username="admin", is_staff=True, password=PASSWORD)
    scenario = create_from_document(two_clusters_document(), owner=admin)
    sign_in(page, "admin", PASSWORD)
    page.goto(reverse("playground:scenario", args=[scenario.pk]))

    move = page.locator("[data-path='clusterQueues.team-a.quotas.a100.flavor']")
    assert move.locator("option").all_inner_texts() == ["a100 (old)", "h100 (new)"]
    move.select_option("h100")
    assert page.locator("#change-count").inner_text() == "1 changed"
    screenshot("playground-clusters-editor")

    page.click("#run-button")
    page.wait_for_url("**/playground/runs/**")
    page.wait_for_selector("#clusters", timeout=60_000)
    new = page.locator("[data-cluster='new']")
    assert "1 → 3" in new.locator("[data-kpi='clusters.new.admitted']").inner_text()
    assert "25.0% → 37.5%" in new.locator("[data-kpi='clusters.new.utilization.nvidia.com/gpu']").inner_text()
    assert (
        "averaged over the 4 h simulation"
        in new.locator("[data-kpi='clusters.new.utilization.nvidia.com/gpu']").inner_text()
    )
    assert "nvidia.com/gpu: cluster old -> new" in page.locator("#changes").inner_text()
    screenshot("playground-clusters-compared")
