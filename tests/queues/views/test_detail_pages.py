"""Detail pages: facts, state now, history charts and the queue's workloads."""

from __future__ import annotations

import pytest
from django.urls import reverse

from core.models import PolicyChange

pytestmark = pytest.mark.django_db

CHARTS = {"chart-allocation", "chart-share", "chart-counts", "chart-waits", "chart-evictions"}


def test_given_local_queue_when_opened_then_entitlement_share_charts_and_workloads_are_shown(cluster, login):
    response = login("alice").get(reverse("queues:local-queue", args=["team-a", "train"]))
    detail = response.context["detail"]
    body = response.content.decode()

    assert detail.entitlement == ["5.33 GPU", "42.7 CPU"]
    assert detail.share.ratio == pytest.approx(0.75)
    assert (detail.admitted, detail.pending) == (1, 2)
    assert set(detail.figures) == CHARTS
    allocation = detail.figures["chart-allocation"]
    names = {trace["name"] for trace in allocation["data"]}
    assert {"Admitted", "Decayed usage", "Entitlement"} <= names
    assert {row.name for row in response.context["work"].rows} == {"a-job-0", "a-job-1", "a-job-2"}
    assert "team-b" not in body


def test_given_cluster_queue_when_admin_opens_it_then_quota_per_flavor_and_all_tenants_are_shown(cluster, login):
    response = login("admin").get(reverse("queues:cluster-queue", args=["cq-gpu"]))
    detail = response.context["detail"]

    quota = {(q.flavor, q.resource): q for q in detail.quotas}
    assert quota[("a100", "nvidia.com/gpu")].nominal == 8000
    assert quota[("a100", "nvidia.com/gpu")].borrowing_limit == 4000
    assert quota[("a100", "nvidia.com/gpu")].used == 8000
    assert {row.name for row in response.context["children"].rows if row.kind == "namespace"} == {"team-a", "team-b"}
    assert detail.figures["chart-allocation"]["data"]


def test_given_tenant_when_shared_cluster_queue_opened_then_other_tenants_are_not_listed(cluster, login):
    response = login("alice").get(reverse("queues:cluster-queue", args=["cq-gpu"]))
    body = response.content.decode()

    assert {row.name for row in response.context["children"].rows if row.kind == "namespace"} == {"team-a"}
    assert {row.namespace for row in response.context["work"].rows} == {"team-a"}
    assert "team-b" not in body
    assert "Recent policy changes" not in body


def test_given_namespace_when_opened_then_hard_quota_use_and_its_queues_are_shown(cluster, login):
    response = login("victor").get(reverse("queues:namespace", args=["team-a"]))
    detail = response.context["detail"]

    assert [(q.resource, q.nominal, q.used) for q in detail.quotas] == [("nvidia.com/gpu", 8000, 4000)]
    assert {row.name for row in response.context["children"].rows if row.kind == "localQueue"} == {"train", "batch"}
    assert {trace["name"] for trace in detail.figures["chart-allocation"]["data"]} >= {"Hard quota"}


def test_given_cohort_when_admin_opens_it_then_subtree_capacity_and_queues_are_shown(cluster, login):
    response = login("admin").get(reverse("queues:cohort", args=["org"]))
    detail = response.context["detail"]

    assert detail.entitlement == ["8 GPU", "96 CPU"]
    assert {row.name for row in response.context["children"].rows if row.kind == "clusterQueue"} == {"cq-gpu", "cq-cpu"}
    assert {row.name for row in response.context["work"].rows} >= {"c-huge", "a-job-1"}


def test_given_policy_changes_when_queue_opened_then_recent_ones_are_listed(cluster, login):
    client = login("admin")
    client.post(
        reverse("queues:edit-local-queue", args=["team-a", "train"]),
        {"cluster_queue": str(cluster.cq_gpu.pk), "weight": "3", "stop_policy": "None", "description": ""},
    )

    body = client.get(reverse("queues:local-queue", args=["team-a", "train"])).content.decode()

    assert PolicyChange.objects.filter(object_type="localqueue").count() == 1
    assert "Recent policy changes" in body and "<ins>3</ins>" in body


def test_given_live_poll_when_local_queue_refreshes_then_fragments_and_figures_come_back(cluster, login):
    response = login("alice").get(reverse("queues:local-queue", args=["team-a", "train"]), {"live": "1"})
    data = response.json()

    assert set(data["fragments"]) == {"detail-kpis", "detail-workloads"}
    assert set(data["figures"]) == CHARTS
    assert "a-job-1" in data["fragments"]["detail-workloads"]
