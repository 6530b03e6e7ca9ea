"""A tenant acts in a real Chromium: signs in, submits a workload from its LocalQueue's form, sees
it pending with its place in the queue, and cancels it from the confirmation page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from queues.admission.passes import run_all_admission_passes
from queues.models import Workload, WorkloadState
from tests.e2e.signin import sign_in
from tests.queues.views.cluster import build_cluster

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def cluster(transactional_db, quiet_broker, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.DASHBOARD_LIVE_INTERVAL_SECONDS = 1
    return build_cluster(history_hours=1)


def test_given_tenant_when_submitting_and_cancelling_in_the_browser_then_both_take_effect(cluster, page, screenshot):
    sign_in(page, "alice")
    page.goto(reverse("queues:local-queue", args=["team-a", "train"]))
    page.click("#submit-workload")
    page.wait_for_url(f"**{reverse('queues:submit-workload', args=['team-a', 'train'])}")

    # The form offers what cq-gpu has quota for, with its limits.
    table = page.locator("#request-fields").inner_text()
    assert "nvidia.com/gpu" in table and "a100: 8 (may borrow 4 more)" in table
    page.fill("#id_name", "from-the-browser")
    page.fill("tr[data-resource='nvidia.com/gpu'] input", "1")
    page.fill("tr[data-resource='cpu'] input", "4")
    page.fill("#id_duration", "1h")
    page.fill("#id_resource_0", "lots")  # first a typo: the field is named, nothing is stored
    page.click("#submit-form button[type=submit]")
    assert "quantity" in page.locator("ul.errorlist[data-field='resource_0']").inner_text()
    assert not Workload.objects.filter(name="from-the-browser").exists()
    page.fill("#id_resource_0", "1")
    screenshot("tenant-submit-form")
    page.click("#submit-form button[type=submit]")

    page.wait_for_url(f"**{reverse('queues:workload', args=['team-a', 'from-the-browser'])}")
    assert "from-the-browser submitted to LocalQueue team-a/train" in page.locator(".messages").inner_text()
    assert page.locator("#workload-state .badge").inner_text() == "Pending"

    # The control loop's next pass ranks it (the beat would run it within seconds); the page,
    # refreshing itself, shows its place.
    run_all_admission_passes()
    workload = Workload.objects.with_queue_position().get(name="from-the-browser")  # type: ignore[attr-defined]
    assert workload.state == WorkloadState.PENDING and workload.queue_position is not None
    page.wait_for_function(
        "(n) => document.querySelector('#workload-state .position')?.textContent.trim() === '#' + n",
        arg=workload.queue_position,
    )
    screenshot("tenant-submitted-pending")

    page.click("#cancel-workload")
    page.wait_for_selector("#confirm-cancel")
    assert page.locator("#id_message").count() == 0  # a pending workload never ran: no reason is kept
    screenshot("tenant-cancel-confirm")
    page.click("#confirm-cancel")

    page.wait_for_url(f"**{reverse('queues:workload', args=['team-a', 'from-the-browser'])}")
    assert "withdrawn before it was admitted" in page.locator(".messages").inner_text()
    assert page.locator("#workload-state .badge").inner_text() == "Cancelled"
    assert page.locator("#cancel-workload").count() == 0
    assert Workload.objects.get(name="from-the-browser").state == WorkloadState.CANCELLED
