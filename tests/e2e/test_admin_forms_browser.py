"""The admins' add, edit and delete pages in a real Chromium: a ClusterQueue's quota edited
through its form and shown on its page, and a flavor added from the queue tree's Add menu, then
deleted from its page after the confirmation that lists what depends on it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from core.models import PolicyChange
from queues.models import AdmissionMode, ClusterQueue, ResourceFlavor
from tests.e2e.signin import sign_in
from tests.queues.views.cluster import build_cluster

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GPU = "nvidia.com/gpu"


@pytest.fixture
def cluster(transactional_db, quiet_broker, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return build_cluster(history_hours=1)


def test_given_admin_when_a_cluster_queue_quota_is_edited_in_the_form_then_its_page_shows_it(cluster, page, screenshot):
    sign_in(page, "admin")
    page.goto(reverse("queues:cluster-queue", args=["cq-gpu"]))
    page.click("a[data-hook=edit]")
    page.wait_for_selector("table.formset")
    rows = page.locator("table.formset tbody tr")
    gpu_row = next(
        index
        for index in range(rows.count())
        if page.locator(f"#id_quotas-{index}-resource").count()
        and page.input_value(f"#id_quotas-{index}-resource") == GPU
    )

    page.fill(f"#id_quotas-{gpu_row}-nominal", "12")
    page.fill(f"#id_quotas-{gpu_row}-lending_limit", "2")
    page.select_option("#id_admission_mode", AdmissionMode.DOMINANT_RESOURCE_SHARE)
    screenshot("admin-edit-cluster-queue-quota")
    page.click("button:has-text('Save')")

    page.wait_for_url(f"**{reverse('queues:cluster-queue', args=['cq-gpu'])}")
    assert "quotas updated" in page.locator(".messages").inner_text()
    gpu = page.locator("#quota-table tbody tr", has_text=GPU)
    assert gpu.locator("td").nth(2).inner_text().strip().startswith("12")
    assert gpu.locator("td").nth(4).inner_text().strip().startswith("2")  # May lend
    screenshot("admin-after-cluster-queue-quota-edit")
    stored = ClusterQueue.objects.get(name="cq-gpu")
    row = stored.quotas.get(resource=GPU)
    assert (row.nominal, row.lending_limit, stored.admission_mode) == (
        12_000,
        2_000,
        AdmissionMode.DOMINANT_RESOURCE_SHARE,
    )
    change = PolicyChange.objects.get(object_type="clusterqueue")
    assert (change.surface, change.actor_name) == ("ui", "admin")


def test_given_admin_when_a_flavor_is_added_from_the_tree_and_deleted_from_its_page_then_both_are_audited(
    cluster, page, screenshot
):
    sign_in(page, "admin")
    page.goto(reverse("queues:queue-tree"))
    page.click("summary[data-hook=add-menu]")
    screenshot("admin-tree-add-menu")
    page.click("a[data-hook=add-flavor]")
    page.fill("#id_name", "h100")
    page.fill("#id_node_labels", "gpu.example.com/model=h100")
    page.click("button:has-text('Create')")

    page.wait_for_url(f"**{reverse('queues:flavor', args=['h100'])}")
    assert "Created resource flavor h100." in page.locator(".messages").inner_text()
    assert "gpu.example.com/model=h100" in page.locator(".page-head").inner_text()

    page.click("a[data-hook=delete]")
    assert "Nothing refers to it." in page.locator("#delete-confirm").inner_text()
    screenshot("admin-delete-flavor")
    page.click("#confirm-delete")

    page.wait_for_url(f"**{reverse('queues:flavors')}")
    assert "Deleted resource flavor h100." in page.locator(".messages").inner_text()
    assert not ResourceFlavor.objects.filter(name="h100").exists()
    assert list(
        PolicyChange.objects.filter(object_type="resourceflavor").order_by("id").values_list("action", "surface")
    ) == [
        ("create", "ui"),
        ("delete", "ui"),
    ]


def test_given_admin_when_a_flavor_in_use_is_to_be_deleted_then_the_page_says_what_depends_and_offers_no_delete(
    cluster, page, screenshot
):
    sign_in(page, "admin")
    page.goto(reverse("queues:flavor", args=["a100"]))
    page.click("a[data-hook=delete]")

    refused = page.locator("#delete-refused").inner_text()
    assert "admitted workloads depend on it" in refused
    assert "cq-gpu nvidia.com/gpu" in refused and "team-b/b-job-0" in refused  # the quota rows and workloads, by name
    assert page.locator("#confirm-delete").count() == 0
    screenshot("admin-delete-flavor-refused")
