"""Policy writes over the API: quantities both ways, flavor order, audit rows, editor limits."""

from __future__ import annotations

import pytest

from core.models import PolicyChange
from queues.models import ClusterQueue, ClusterQueueQuota, LocalQueue, NamespaceQuota, ResourceFlavor
from tests.queues.api.helpers import database_snapshot

pytestmark = pytest.mark.django_db

CQS = "/api/v1/cluster-queues/"


def test_given_quotas_in_two_flavors_then_rows_keep_the_order_flavors_were_listed(world, clients):
    ResourceFlavor.objects.create(name="h100")
    rows = [
        {"flavor": "h100", "resource": "nvidia.com/gpu", "nominal": 8},
        {"flavor": "default", "resource": "cpu", "nominal": "500m"},
        {"flavor": "h100", "resource": "memory", "nominal": "1Ti", "borrowing_limit": "512Gi"},
    ]

    response = clients["admin"].post(CQS, {"name": "gpu", "cohort": "org", "quotas": rows}, format="json")

    assert response.status_code == 201
    quotas = response.json()["quotas"]
    assert [(q["flavor"], q["resource"]) for q in quotas] == [
        ("h100", "memory"),
        ("h100", "nvidia.com/gpu"),
        ("default", "cpu"),
    ]
    assert quotas[0]["nominal"] == 2**40 and quotas[0]["nominal_formatted"] == "1Ti"
    assert quotas[0]["borrowing_limit_formatted"] == "512Gi"
    assert quotas[2]["nominal"] == 0.5 and quotas[2]["nominal_formatted"] == "500m"
    stored = dict(
        ClusterQueueQuota.objects.filter(cluster_queue__name="gpu").values_list("flavor__name", "flavor_order")
    )
    assert stored == {"h100": 0, "default": 1}


def test_given_a_change_then_one_audit_row_with_surface_api_actor_before_and_after(world, clients):
    url = f"{CQS}{world.cluster_queue.pk}/"

    clients["admin"].patch(url, {"weight": 3}, format="json")

    change = PolicyChange.objects.get(object_type="clusterqueue", surface="api")
    assert (change.action, change.actor_name) == ("update", "admin")
    assert (change.before["weight"], change.after["weight"]) == ("1", "3")
    assert change.after["quotas"] == change.before["quotas"], "a PATCH without quotas keeps them"


def test_given_create_and_delete_then_both_are_audited(world, clients):
    created = clients["admin"].post("/api/v1/resource-flavors/", {"name": "tpu"}, format="json").json()

    clients["admin"].delete(f"/api/v1/resource-flavors/{created['id']}/")

    actions = list(PolicyChange.objects.filter(object_type="resourceflavor").values_list("action", "surface"))
    assert sorted(actions) == [("create", "api"), ("delete", "api")]


def test_given_an_unchanged_put_then_no_audit_row(world, clients):
    url = f"/api/v1/namespaces/{world.ns_a.pk}/"
    body = clients["admin"].get(url).json()

    clients["admin"].put(url, body, format="json")

    assert not PolicyChange.objects.filter(surface="api").exists()


def test_given_a_hard_quota_then_it_replaces_the_namespace_rows(world, clients):
    response = clients["admin"].patch(
        f"/api/v1/namespaces/{world.ns_a.pk}/", {"hard_quota": {"memory": "64Gi", "nvidia.com/gpu": 2}}, format="json"
    )

    assert response.json()["hard_quota"] == {"memory": 64 * 2**30, "nvidia.com/gpu": 2}
    assert response.json()["hard_quota_formatted"] == {"memory": "64Gi", "nvidia.com/gpu": "2"}
    assert set(NamespaceQuota.objects.filter(namespace=world.ns_a).values_list("resource", flat=True)) == {
        "memory",
        "nvidia.com/gpu",
    }


def test_given_a_queue_still_in_use_when_deleted_then_409_names_the_user_and_nothing_changes(world, clients):
    before = database_snapshot()

    response = clients["admin"].delete(f"{CQS}{world.cluster_queue.pk}/")

    assert response.status_code == 409
    assert response.json()["code"] == "protected"
    assert "local queue" in response.json()["detail"]
    assert database_snapshot() == before


@pytest.mark.parametrize("field", ["description", "stop_policy"])
def test_given_editor_when_changing_an_allowed_field_then_saved_and_audited_with_the_editor(world, clients, field):
    value = {"description": "paused for the demo", "stop_policy": "Hold"}[field]

    response = clients["editor_a"].patch(f"/api/v1/local-queues/{world.lq_a.pk}/", {field: value}, format="json")

    assert response.status_code == 200
    assert getattr(LocalQueue.objects.get(pk=world.lq_a.pk), field) == value
    assert PolicyChange.objects.get(object_type="localqueue", surface="api").actor_name == "editor-a"


@pytest.mark.parametrize(
    ("change", "named"),
    [({"weight": 10}, "weight"), ({"cluster_queue": "spare"}, "cluster_queue"), ({"name": "renamed"}, "name")],
)
def test_given_editor_when_changing_an_admin_field_then_403_names_it_and_nothing_changes(world, clients, change, named):
    before = database_snapshot()

    response = clients["editor_a"].patch(f"/api/v1/local-queues/{world.lq_a_spare.pk}/", change, format="json")

    assert response.status_code == 403
    assert f"ask an admin to change {named}" in response.json()["detail"]
    assert database_snapshot() == before


def test_given_lists_then_filters_ordering_and_page_size_apply(world, clients):
    pending = clients["admin"].get("/api/v1/workloads/", {"state": "Pending", "namespace": "team-a"}).json()
    ordered = clients["admin"].get("/api/v1/namespaces/", {"ordering": "-weight", "page_size": 1}).json()

    assert [row["name"] for row in pending["results"]] == ["a-pending"]
    assert ordered["count"] == 3 and len(ordered["results"]) == 1
    assert ordered["results"][0]["name"] == "team-a"
    assert ordered["next"] is not None


def test_given_a_cluster_queue_with_usage_then_its_status_and_counts_are_shown(world, clients):
    ClusterQueue.objects.filter(pk=world.cluster_queue.pk).update(
        consumed_resources={"cpu": 1500.0}, weighted_share=0.4
    )

    row = clients["viewer_a"].get(f"{CQS}{world.cluster_queue.pk}/").json()

    assert row["status"]["consumed_resources"] == {"cpu": 1.5}
    assert row["status"]["consumed_resources_formatted"] == {"cpu": "1500m"}
    assert row["status"]["weighted_share"] == 0.4
    assert (row["pending_workloads"], row["admitted_workloads"]) == (2, 1)
