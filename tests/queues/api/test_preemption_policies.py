"""The preemption policies issue 15 added, over the API: ExceedWeight on a ClusterQueue and
withinNamespace on a namespace, stored, audited and validated like every other field."""

from __future__ import annotations

import pytest

from core.models import PolicyChange
from queues.models import ClusterQueue, Namespace

pytestmark = pytest.mark.django_db


def test_given_exceed_weight_then_the_cluster_queue_stores_it(world, clients):
    url = f"/api/v1/cluster-queues/{world.cluster_queue.pk}/"

    response = clients["admin"].patch(url, {"preemption_within_cluster_queue": "ExceedWeight"}, format="json")

    assert response.status_code == 200, response.json()
    world.cluster_queue.refresh_from_db()
    assert world.cluster_queue.preemption_within_cluster_queue == "ExceedWeight"


def test_given_within_namespace_then_stored_and_audited(world, clients):
    namespace = Namespace.objects.order_by("name").first()

    response = clients["admin"].patch(
        f"/api/v1/namespaces/{namespace.pk}/", {"preemption_within_namespace": "LowerPriority"}, format="json"
    )

    assert response.status_code == 200, response.json()
    assert response.json()["preemption_within_namespace"] == "LowerPriority"
    change = PolicyChange.objects.filter(object_type="namespace", surface="api").latest("id")
    assert (change.before["preemption_within_namespace"], change.after["preemption_within_namespace"]) == (
        "Never",
        "LowerPriority",
    )


def test_given_a_bad_policy_then_400_naming_the_field_and_nothing_changes(world, clients):
    namespace = Namespace.objects.order_by("name").first()

    response = clients["admin"].patch(
        f"/api/v1/namespaces/{namespace.pk}/", {"preemption_within_namespace": "Any"}, format="json"
    )
    cq_response = clients["admin"].patch(
        f"/api/v1/cluster-queues/{world.cluster_queue.pk}/",
        {"preemption_within_cluster_queue": "Always"},
        format="json",
    )

    assert response.status_code == 400 and "preemption_within_namespace" in response.json()
    assert cq_response.status_code == 400 and "preemption_within_cluster_queue" in cq_response.json()
    assert Namespace.objects.get(pk=namespace.pk).preemption_within_namespace == "Never"
    assert ClusterQueue.objects.get(pk=world.cluster_queue.pk).preemption_within_cluster_queue == "Never"
