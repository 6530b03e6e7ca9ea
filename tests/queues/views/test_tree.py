"""The queue tree: levels, weights, quota, usage, shares against entitlement, holds; scoping."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from core.access import access_for
from queues.models import LocalQueue
from queues.selectors.tree import TreeFilters, queue_tree

pytestmark = pytest.mark.django_db


def rows_by_name(response) -> dict[tuple[str, str], object]:
    return {(row.kind, row.name): row for row in response.context["tree"].rows}


def test_given_cluster_when_admin_opens_tree_then_every_level_is_listed_in_order(cluster, login):
    response = login("admin").get(reverse("queues:queue-tree"))
    kinds = [(row.kind, row.name) for row in response.context["tree"].rows]

    assert kinds == [
        ("cohort", "org"),
        ("clusterQueue", "cq-cpu"),
        ("namespace", "team-a"),
        ("localQueue", "batch"),
        ("namespace", "team-c"),
        ("localQueue", "etl"),
        ("clusterQueue", "cq-gpu"),
        ("namespace", "team-a"),
        ("localQueue", "train"),
        ("namespace", "team-b"),
        ("localQueue", "train"),
    ]


def test_given_weights_when_tree_opened_then_entitlement_follows_namespace_then_queue_weights(cluster, login):
    response = login("admin").get(reverse("queues:queue-tree"))
    rows = [row for row in response.context["tree"].rows if row.kind == "localQueue" and row.key["name"] == "train"]
    a_train, b_train = rows

    # cq-gpu holds 8 GPU; team-a weighs 2 against team-b's 1: 2/3 and 1/3 of it.
    assert a_train.entitlement[0] == "5.33 GPU"
    assert b_train.entitlement[0] == "2.67 GPU"
    # each holds one 4-GPU job: 0.75x and 1.5x of their entitlement
    assert a_train.share.ratio == pytest.approx(0.75)
    assert b_train.share.ratio == pytest.approx(1.5)
    assert b_train.share.level == "over" and a_train.share.level == "under"


def test_given_cluster_queue_when_tree_opened_then_quota_allocation_counts_and_mode_are_shown(cluster, login):
    rows = rows_by_name(login("admin").get(reverse("queues:queue-tree")))
    gpu = rows[("clusterQueue", "cq-gpu")]
    cpu = rows[("clusterQueue", "cq-cpu")]

    assert gpu.mode == "UsageBasedAdmissionFairSharing"
    assert gpu.quota == ["8 GPU", "64 CPU"]
    assert gpu.allocated == ["8 GPU", "16 CPU"]
    assert gpu.borrowed == []
    assert (gpu.admitted, gpu.pending) == (2, 4)
    assert cpu.mode == "NoAdmissionFairSharing"
    assert (cpu.admitted, cpu.pending) == (0, 2)


def test_given_decayed_usage_when_tree_opened_then_scores_and_usage_shares_come_from_the_last_sample(cluster, login):
    rows = rows_by_name(login("admin").get(reverse("queues:queue-tree")))
    gpu = rows[("clusterQueue", "cq-gpu")]

    assert gpu.decayed and gpu.usage_share.ratio is not None and 0 < gpu.usage_share.ratio <= 1
    assert gpu.score


def test_given_budget_hold_when_tree_opened_then_it_shows_on_its_queue(cluster, login):
    body = login("admin").get(reverse("queues:queue-tree")).content.decode()

    assert "BudgetExhausted" in body
    assert "budget etl-hours is exhausted" in body


def test_given_stop_policy_when_tree_opened_then_queue_is_marked_stopped(cluster, login):
    LocalQueue.objects.filter(pk=cluster.a_train.pk).update(stop_policy="Hold")

    body = login("admin").get(reverse("queues:queue-tree")).content.decode()

    assert "stopped: Hold" in body


@pytest.mark.parametrize("user", ["alice", "victor"])
def test_given_tenant_when_tree_opened_then_only_own_namespaces_below_shared_queues(cluster, login, user):
    response = login(user).get(reverse("queues:queue-tree"))
    rows = response.context["tree"].rows
    body = response.content.decode()

    assert {row.name for row in rows if row.kind == "namespace"} == {"team-a"}
    assert {(row.kind, row.name) for row in rows if row.kind == "clusterQueue"} == {
        ("clusterQueue", "cq-gpu"),
        ("clusterQueue", "cq-cpu"),
    }
    assert "team-b" not in body and "team-c" not in body
    assert "Edit" not in body or user == "alice"


def test_given_tenant_editor_when_tree_opened_then_only_own_local_queues_are_editable(cluster, login):
    rows = login("alice").get(reverse("queues:queue-tree")).context["tree"].rows

    editable = {(row.kind, row.name) for row in rows if row.editable}
    assert editable == {("localQueue", "train"), ("localQueue", "batch")}


def test_given_search_when_tree_filtered_then_only_matching_queues_remain(cluster, login):
    rows = login("admin").get(reverse("queues:queue-tree"), {"q": "team-c"}).context["tree"].rows

    assert [(row.kind, row.name) for row in rows if row.kind in ("namespace", "localQueue")] == [
        ("namespace", "team-c"),
        ("localQueue", "etl"),
    ]


def test_given_many_local_queues_when_paged_then_group_rows_repeat_as_continued(cluster, db):
    for index in range(5):
        LocalQueue.objects.create(namespace=cluster.team_c, name=f"extra-{index}", cluster_queue=cluster.cq_cpu)
    admin = access_for(get_user_model().objects.get(username="admin"))

    second = queue_tree(admin, TreeFilters(), page_number=2, page_size=4)

    assert second.page.paginator.num_pages == 3
    assert second.rows[0].continued and second.rows[0].kind == "cohort"
    assert [row.kind for row in second.rows[:3]] == ["cohort", "clusterQueue", "namespace"]
    assert second.total_local_queues == 9
