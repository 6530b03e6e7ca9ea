"""Every short resource, the dominant first, the same in the stored reason, the API (workload
status and why-pending), the workload page and the queue's shared reason by reference.

The issue's 8-GPU job, on PostgreSQL, ranked by a real admission pass (``shortage_cluster``).
"""

from __future__ import annotations

import html

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from core.models import TenantMembership
from queues.admission import passes
from queues.models import PendingOrder, WorkloadReason
from queues.selectors.reasons import sentence
from tests.factories import TenantMembershipFactory, UserFactory
from tests.queues.shortage_cluster import EXPECTED_MESSAGE, GPU, _submit, build_gpu_cluster

pytestmark = pytest.mark.django_db

EXPECTED_SHORTAGES = [
    {
        "resource": GPU,
        "flavor": "a100",
        "requested": 8,
        "requested_formatted": "8",
        "available": 0,
        "available_formatted": "0",
        "missing": 8,
        "missing_formatted": "8",
        "ceiling": 8,
        "ceiling_formatted": "8",
        "never_fits": False,
    },
    {
        "resource": "memory",
        "flavor": "a100",
        "requested": 384 * 1024**3,
        "requested_formatted": "384Gi",
        "available": 320 * 1024**3,
        "available_formatted": "320Gi",
        "missing": 64 * 1024**3,
        "missing_formatted": "64Gi",
        "ceiling": 640 * 1024**3,
        "ceiling_formatted": "640Gi",
        "never_fits": False,
    },
]


@pytest.fixture
def tenant():
    user = UserFactory(username="tenant-a")
    cluster = build_gpu_cluster()
    TenantMembershipFactory(user=user, namespace=cluster.local_queue.namespace, role=TenantMembership.Role.EDITOR)
    return user, cluster


def test_given_the_8_gpu_job_then_the_stored_reason_names_both_resources_gpu_first(tenant):
    _, cluster = tenant

    stored = WorkloadReason.objects.get(workload=cluster.waiting)

    assert stored.message == EXPECTED_MESSAGE
    assert [row["resource"] for row in stored.shortages] == [GPU, "memory"]


def test_the_api_the_why_pending_api_and_the_page_agree(tenant, client):
    user, cluster = tenant
    api = APIClient()
    api.force_authenticate(user)
    waiting = cluster.waiting

    status = api.get(f"/api/v1/workloads/{waiting.pk}/").json()
    why = api.get(f"/api/v1/priority/{waiting.pk}/").json()
    client.force_login(user)
    page = client.get(reverse("queues:workload", args=["team-a", waiting.name])).content.decode()

    assert status["pending_reason"] == {
        "code": "InsufficientQuota",
        "message": EXPECTED_MESSAGE,
        "shortages": EXPECTED_SHORTAGES,
        "by_reference": False,
    }
    assert why["reason"]["code"] == "InsufficientQuota"
    assert why["reason"]["message"] == sentence("InsufficientQuota", EXPECTED_MESSAGE)  # the page's sentence
    assert why["reason"]["shortages"] == EXPECTED_SHORTAGES
    assert html.escape(sentence("InsufficientQuota", EXPECTED_MESSAGE)) in page
    table = page[page.index('id="shortages"') :]
    assert table.index(f">{GPU}</td>") < table.index(">memory</td>")  # dominant first on the page too
    assert ">64Gi</td>" in table and ">320Gi</td>" in table


def test_workloads_explained_by_reference_show_their_heads_shortages(tenant, settings):
    """Past the first N of a queue (issue 26), a reason is stored by reference; its shortages
    come from the queue's order row, like its sentence, and the API shows both."""
    user, cluster = tenant
    settings.ADMISSION_EXPLAINED_PER_QUEUE = 1
    later = [_submit(cluster.local_queue, f"later-{i}", "384Gi") for i in range(2)]
    passes.run_all_admission_passes()
    api = APIClient()
    api.force_authenticate(user)

    reason = api.get(f"/api/v1/workloads/{later[-1].pk}/").json()["pending_reason"]

    stored = WorkloadReason.objects.get(workload=later[-1])
    assert stored.behind_id == cluster.cluster_queue.pk and stored.shortages == []
    order = PendingOrder.objects.get(cluster_queue=cluster.cluster_queue)
    assert [row["resource"] for row in order.by_reference_shortages] == [GPU, "memory"]
    assert reason["message"] == order.by_reference and EXPECTED_MESSAGE in reason["message"]
    assert reason["shortages"] == EXPECTED_SHORTAGES and reason["by_reference"] is True
