"""Priority is policy, not a tenant's choice.

The probe: a tenant POSTed ``priority: 2147483647`` and, under ``LowerPriority`` preemption,
evicted bob's running job. Now submissions name a WorkloadPriorityClass their namespace allows
(or get its default); a raw priority is for admins only; evictions name the class.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from core.api_tokens import issue_token
from core.models import PolicyChange, TenantMembership
from queues.models import Namespace, Workload, WorkloadPriorityClass
from queues.models.choices import WithinClusterQueuePreemption
from tests.factories import UserFactory
from tests.queues.loop_fixtures import make_cluster_queue, make_local_queue, submit

pytestmark = pytest.mark.django_db

WL = "/api/v1/workloads/"


def client_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(user)}")
    return client


@pytest.fixture
def shared():
    """alice (tenant of team-alice) and bob's running job (team-bob), one ClusterQueue of 4 CPUs
    with LowerPriority preemption; classes urgent (100) and normal (0), team-alice allows normal."""
    cq = make_cluster_queue("shared", cpu="4")
    cq.preemption_within_cluster_queue = WithinClusterQueuePreemption.LOWER_PRIORITY
    cq.save()
    alice_lq = make_local_queue("team-alice", "main", cq)
    bob_lq = make_local_queue("team-bob", "main", cq)
    urgent = WorkloadPriorityClass.objects.create(name="urgent", value=100)
    normal = WorkloadPriorityClass.objects.create(name="normal", value=0)
    Namespace.objects.filter(name="team-alice").update(
        allowed_priority_classes=["normal"], default_priority_class=normal
    )
    alice = UserFactory(username="alice-p")
    TenantMembership.objects.create(user=alice, namespace=alice_lq.namespace, role=TenantMembership.Role.EDITOR)
    admin = UserFactory(username="admin-p", is_staff=True)
    bobs = submit(bob_lq, "bobs-job", cpu="4", duration=3600)
    from tests.budgets.helpers import admission_pass

    admission_pass(cq, timezone.now() - timedelta(minutes=5))
    bobs.refresh_from_db()
    assert bobs.state == "Admitted"
    return {
        "cq": cq,
        "alice": client_for(alice),
        "admin": client_for(admin),
        "bobs": bobs,
        "urgent": urgent,
        "pass": lambda: admission_pass(cq, timezone.now()),
    }


def body(**extra):
    return {"name": "mine", "local_queue": "team-alice/main", "pod_sets": [{"requests": {"cpu": "4"}}], **extra}


def test_given_a_tenants_raw_int32_priority_then_400_naming_priority_and_bobs_job_keeps_running(shared):
    response = shared["alice"].post(WL, body(priority=2147483647), format="json")

    assert response.status_code == 400, response.content
    assert "only admins set a raw priority" in response.json()["priority"][0]
    assert not Workload.objects.filter(name="mine").exists()
    shared["pass"]()
    shared["bobs"].refresh_from_db()
    assert shared["bobs"].state == "Admitted" and shared["bobs"].eviction_count == 0


def test_given_no_class_then_the_namespace_default_applies_and_cannot_evict_bob(shared):
    response = shared["alice"].post(WL, body(), format="json")

    assert response.status_code == 201, response.content
    assert (response.json()["priority"], response.json()["priority_class"]) == (0, "normal")
    shared["pass"]()
    shared["bobs"].refresh_from_db()
    assert shared["bobs"].state == "Admitted"


def test_given_a_class_the_namespace_does_not_allow_then_400_naming_priority_class(shared):
    response = shared["alice"].post(WL, body(priority_class="urgent"), format="json")

    assert response.status_code == 400
    message = response.json()["priority_class"][0]
    assert "namespace team-alice" in message and "allowed: normal" in message
    assert not Workload.objects.filter(name="mine").exists()


def test_given_an_allowed_class_then_its_value_is_the_priority_and_an_eviction_names_the_class(shared):
    """An admin's policy lets team-alice use urgent: then it may preempt, and bob reads why."""
    response = shared["admin"].patch(
        f"/api/v1/namespaces/{Namespace.objects.get(name='team-alice').pk}/",
        {"allowed_priority_classes": ["normal", "urgent"]},
        format="json",
    )
    assert response.status_code == 200, response.content
    change = PolicyChange.objects.filter(object_type="namespace").latest("id")
    assert change.after["allowed_priority_classes"] == ["normal", "urgent"]

    submitted = shared["alice"].post(WL, body(priority_class="urgent"), format="json")
    assert submitted.status_code == 201, submitted.content
    assert (submitted.json()["priority"], submitted.json()["priority_class"]) == (100, "urgent")
    shared["pass"]()

    shared["bobs"].refresh_from_db()
    assert shared["bobs"].eviction_count == 1
    assert "preempted by team-alice/mine (priority class urgent, priority 100)" in shared["bobs"].last_eviction_reason


def test_given_an_admin_then_a_raw_priority_is_still_accepted(shared):
    response = shared["admin"].post(WL, body(priority=500), format="json")

    assert response.status_code == 201, response.content
    assert (response.json()["priority"], response.json()["priority_class"]) == (500, "")


def test_given_both_a_class_and_a_priority_then_400(shared):
    response = shared["admin"].post(WL, body(priority=5, priority_class="normal"), format="json")
    assert response.status_code == 400 and "not both" in response.json()["priority"][0]


def test_tenants_cannot_edit_which_classes_their_namespace_allows(shared):
    namespace = Namespace.objects.get(name="team-alice")
    response = shared["alice"].patch(
        f"/api/v1/namespaces/{namespace.pk}/", {"allowed_priority_classes": ["urgent"]}, format="json"
    )
    assert response.status_code in (403, 405)
    namespace.refresh_from_db()
    assert namespace.allowed_priority_classes == ["normal"]


def test_given_an_unknown_class_in_the_allowed_list_then_400_naming_the_field(shared):
    namespace = Namespace.objects.get(name="team-alice")
    response = shared["admin"].patch(
        f"/api/v1/namespaces/{namespace.pk}/", {"allowed_priority_classes": ["normal", "platinum"]}, format="json"
    )
    assert response.status_code == 400
    assert "platinum" in str(response.json()["allowed_priority_classes"])
