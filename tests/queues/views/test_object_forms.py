"""Add, edit and delete pages of the policy objects (NetBox-style): saved through the API's
services (the models' validation, one audit row with surface ``ui``), errors on the named field
with nothing stored, a stale page refused (409), admins only, and a delete refused while
anything (admitted work first) depends on the object."""

from __future__ import annotations

import html
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from budgets.models import Budget
from core.access import access_for
from core.models import PolicyChange
from core.versions import version_of
from queues.models import (
    AdmissionMode,
    ClusterQueue,
    Cohort,
    CohortQuota,
    LocalQueue,
    Namespace,
    ResourceFlavor,
    Workload,
    WorkloadState,
)

pytestmark = pytest.mark.django_db

GPU = "nvidia.com/gpu"


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch) -> None:
    """A created budget asks for its accounting cycle after the commit; no worker runs here."""
    from budgets import services

    monkeypatch.setattr(services, "request_reconcile", lambda budget_id: None)


def rows(prefix: str, quota_rows: list[dict[str, str]]) -> dict[str, str]:
    """A quota formset as a browser posts it (new rows only)."""
    data = {
        f"{prefix}-TOTAL_FORMS": str(len(quota_rows)),
        f"{prefix}-INITIAL_FORMS": "0",
        f"{prefix}-MIN_NUM_FORMS": "0",
        f"{prefix}-MAX_NUM_FORMS": "1000",
    }
    for index, row in enumerate(quota_rows):
        for key, value in row.items():
            data[f"{prefix}-{index}-{key}"] = value
    return data


def flavor_id(name: str) -> str:
    return str(ResourceFlavor.objects.get(name=name).pk)


def cluster_queue_post(name: str, **fields: str) -> dict[str, str]:
    data = {
        "name": name,
        "cohort": str(Cohort.objects.get(name="org").pk),
        "weight": "1",
        "queueing_strategy": "BestEffortFIFO",
        "admission_mode": AdmissionMode.USAGE_BASED,
        "preemption_within_cluster_queue": "Never",
        "reclaim_within_cohort": "Never",
        "stop_policy": "None",
        "description": "",
        **rows(
            "quotas",
            [
                {
                    "flavor": flavor_id("a100"),
                    "resource": GPU,
                    "nominal": "4",
                    "borrowing_limit": "2",
                    "lending_limit": "1",
                    "flavor_order": "0",
                }
            ],
        ),
    }
    data.update(fields)
    return data


def ui_change(object_type: str, action: str) -> PolicyChange:
    return PolicyChange.objects.get(object_type=object_type, action=action, surface="ui")


# -- add ---------------------------------------------------------------------------------------


def test_given_admin_when_a_cluster_queue_is_added_with_a_quota_row_then_it_is_stored_and_audited(cluster, login):
    response = login("admin").post(reverse("queues:add-cluster-queue"), cluster_queue_post("cq-new"))

    assert response.status_code == 302 and response["Location"] == reverse("queues:cluster-queue", args=["cq-new"])
    queue = ClusterQueue.objects.get(name="cq-new")
    assert (queue.cohort.name, queue.admission_mode) == ("org", AdmissionMode.USAGE_BASED)
    assert list(
        queue.quotas.values_list("flavor__name", "resource", "nominal", "borrowing_limit", "lending_limit")
    ) == [("a100", GPU, 4000, 2000, 1000)]
    change = ui_change("clusterqueue", "create")
    assert change.actor_name == "admin" and change.after["quotas"][0]["lending_limit"] == "1"


def test_given_admin_when_a_cohort_is_added_under_a_parent_then_it_is_stored_with_its_own_quota(cluster, login):
    data = {
        "name": "research",
        "parent": str(cluster.cohort.pk),
        "weight": "2",
        "admission_mode": "",
        "description": "lab",
        **rows("quotas", [{"flavor": flavor_id("default"), "resource": "cpu", "nominal": "16"}]),
    }

    response = login("admin").post(reverse("queues:add-cohort"), data)

    assert response.status_code == 302
    cohort = Cohort.objects.get(name="research")
    assert (cohort.parent_id, cohort.weight) == (cluster.cohort.pk, Decimal(2))
    assert list(CohortQuota.objects.filter(cohort=cohort).values_list("resource", "nominal")) == [("cpu", 16000)]
    assert ui_change("cohort", "create").object_repr == "research"


def test_given_admin_when_a_namespace_is_added_with_a_hard_quota_then_it_is_stored(cluster, login):
    data = {
        "name": "team-d",
        "weight": "0.5",
        "preemption_within_namespace": "Never",
        "description": "",
        **rows("quotas", [{"resource": "memory", "hard": "64Gi"}]),
    }

    response = login("admin").post(reverse("queues:add-namespace"), data)

    assert response.status_code == 302 and response["Location"] == reverse("queues:namespace", args=["team-d"])
    namespace = Namespace.objects.get(name="team-d")
    assert namespace.weight == Decimal("0.5")
    assert namespace.hard_quota() == {"memory": 64 * 2**30 * 1000}
    assert ui_change("namespace", "create").after["weight"] == "0.5"


def test_given_admin_when_a_local_queue_is_added_then_it_feeds_its_cluster_queue(cluster, login):
    data = {
        "namespace": str(cluster.team_c.pk),
        "name": "gpu",
        "cluster_queue": str(cluster.cq_gpu.pk),
        "weight": "3",
        "stop_policy": "None",
        "description": "",
    }

    response = login("admin").post(reverse("queues:add-local-queue"), data)

    assert response.status_code == 302
    assert response["Location"] == reverse("queues:local-queue", args=["team-c", "gpu"])
    queue = LocalQueue.objects.get(namespace=cluster.team_c, name="gpu")
    assert (queue.cluster_queue_id, queue.weight) == (cluster.cq_gpu.pk, Decimal(3))
    assert ui_change("localqueue", "create").after["cluster_queue"] == "cq-gpu"


def test_given_admin_when_a_flavor_is_added_with_node_labels_then_they_are_stored(cluster, login):
    data = {"name": "h100", "description": "Hopper", "node_labels": "gpu.example.com/model=h100\nzone = eu-1\n"}

    response = login("admin").post(reverse("queues:add-flavor"), data)

    assert response.status_code == 302 and response["Location"] == reverse("queues:flavor", args=["h100"])
    flavor = ResourceFlavor.objects.get(name="h100")
    assert flavor.node_labels == {"gpu.example.com/model": "h100", "zone": "eu-1"}
    assert ui_change("resourceflavor", "create").after["node_labels"] == flavor.node_labels


def test_given_admin_when_a_budget_is_added_then_it_is_stored_audited_and_shown(cluster, login):
    data = {
        "name": "c-wall-time",
        "namespace": str(cluster.team_c.pk),
        "kind": "WallTime",
        "anchor": "2026-11-01 00:00",
        "allocated_hours": "40",
        "renewal": "monthly",
        "action": "Hold",
        "alert_thresholds": "50, 90",
    }

    response = login("admin").post(reverse("budgets:add"), data, follow=True)

    budget = Budget.objects.get(name="c-wall-time")
    assert (budget.namespace_id, budget.allocated_hours, budget.alert_thresholds) == (
        cluster.team_c.pk,
        Decimal(40),
        [50, 90],
    )
    assert response.redirect_chain[-1][0] == reverse("budgets:detail", args=["c-wall-time"])
    assert "Created budget c-wall-time." in response.content.decode()
    assert ui_change("budget", "create").actor_name == "admin"


def test_given_add_link_with_a_namespace_when_opened_then_the_form_starts_in_that_namespace(cluster, login):
    page = login("admin").get(reverse("queues:add-local-queue") + "?namespace=team-b")

    assert page.status_code == 200
    assert page.context["form"]["namespace"].value() == cluster.team_b.pk


# -- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "data", "field", "message"),
    [
        ("queues:add-cluster-queue", cluster_queue_post, "name", "already exists"),
        (
            "queues:add-namespace",
            {"name": "Team_D", "weight": "1", "preemption_within_namespace": "Never"},
            "name",
            "is not a valid name",
        ),
        (
            "queues:add-namespace",
            {"name": "team-d", "weight": "-1", "preemption_within_namespace": "Never"},
            "weight",
            "weight must be greater than 0",
        ),
        (
            "queues:add-local-queue",
            {"name": "q", "weight": "1", "stop_policy": "None"},
            "cluster_queue",
            "This field is required",
        ),
        (
            "queues:add-flavor",
            {"name": "h100", "node_labels": "no equals sign"},
            "node_labels",
            "write each label as name=value",
        ),
        (
            "queues:add-flavor",
            {"name": "h100", "node_labels": "bad label!=x"},
            "node_labels",
            "is not a valid label name",
        ),
        (
            "queues:add-flavor",
            {"name": "h100", "node_labels": "zone=" + "x" * 70},
            "node_labels",
            "label values are strings",
        ),
    ],
    ids=[
        "duplicate-name",
        "bad-name",
        "negative-weight",
        "no-cluster-queue",
        "labels-shape",
        "label-name",
        "label-value",
    ],
)
def test_given_bad_input_when_added_then_400_the_error_names_the_field_and_nothing_is_stored(
    cluster, login, url, data, field, message
):
    before = {model: model.objects.count() for model in (ClusterQueue, Namespace, LocalQueue, ResourceFlavor)}
    posted = data("cq-gpu") if callable(data) else data

    response = login("admin").post(reverse(url), posted)

    assert response.status_code == 400
    assert message in " ".join(response.context["form"].errors[field])
    assert f'data-field="{field}"' in response.content.decode()
    assert {model: model.objects.count() for model in before} == before
    assert not PolicyChange.objects.exists()


def test_given_a_bad_quota_row_when_a_cluster_queue_is_added_then_the_row_field_is_named(cluster, login):
    data = cluster_queue_post("cq-new", **{"quotas-0-nominal": "lots"})

    response = login("admin").post(reverse("queues:add-cluster-queue"), data)

    assert response.status_code == 400
    assert response.context["formset"].forms[0].errors["nominal"]
    assert 'data-field="quotas-0-nominal"' in response.content.decode()
    assert not ClusterQueue.objects.filter(name="cq-new").exists()


def test_given_a_lending_limit_above_nominal_when_added_then_the_models_rule_refuses_it(cluster, login):
    data = cluster_queue_post("cq-new", **{"quotas-0-lending_limit": "9"})

    response = login("admin").post(reverse("queues:add-cluster-queue"), data)

    assert response.status_code == 400
    assert "lending_limit" in response.context["formset"].forms[0].errors
    assert not ClusterQueue.objects.filter(name="cq-new").exists()


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"kind": "WallTime"}, "local_queue"),  # no target
        ({"kind": "WallTime", "namespace": "team-c", "resource": GPU}, "resource"),
        ({"kind": "ResourceHours", "namespace": "team-c"}, "resource"),
    ],
    ids=["no-target", "walltime-with-resource", "resource-hours-without-resource"],
)
def test_given_a_bad_budget_when_added_then_the_budgets_rule_names_the_field(cluster, login, data, field):
    posted = {
        "name": "x-budget",
        "allocated_hours": "1",
        "renewal": "none",
        "action": "Hold",
        "anchor": "2026-11-01 00:00",
    }
    posted.update({k: str(Namespace.objects.get(name=v).pk) if k == "namespace" else v for k, v in data.items()})

    response = login("admin").post(reverse("budgets:add"), posted)

    assert response.status_code == 400
    assert response.context["form"].errors[field]
    assert not Budget.objects.filter(name="x-budget").exists()


# -- edit a flavor -------------------------------------------------------------------------------


def test_given_admin_when_a_flavor_is_edited_then_it_changes_and_one_ui_row_records_it(cluster, login):
    client = login("admin")
    url = reverse("queues:edit-flavor", args=["a100"])
    page = client.get(url)
    version = page.context["form"]["version"].value()

    response = client.post(url, {"version": version, "description": "NVIDIA A100", "node_labels": "gpu=a100"})

    assert response.status_code == 302 and response["Location"] == reverse("queues:flavor", args=["a100"])
    flavor = ResourceFlavor.objects.get(name="a100")
    assert (flavor.description, flavor.node_labels) == ("NVIDIA A100", {"gpu": "a100"})
    change = ui_change("resourceflavor", "update")
    assert change.changed_fields() == ["description", "node_labels"]


def test_given_a_flavor_changed_since_the_page_was_opened_when_saved_then_409_and_nothing_is_written(cluster, login):
    client = login("admin")
    url = reverse("queues:edit-flavor", args=["a100"])
    version = client.get(url).context["form"]["version"].value()
    ResourceFlavor.objects.filter(name="a100").update(description="changed by the API")

    response = client.post(url, {"version": version, "description": "mine", "node_labels": ""})

    assert response.status_code == 409
    assert "was changed after you opened this page" in html.unescape(response.content.decode())
    assert ResourceFlavor.objects.get(name="a100").description == "changed by the API"
    assert not PolicyChange.objects.exists()


# -- who may ---------------------------------------------------------------------------------------

ADD_PAGES = [
    "queues:add-cohort",
    "queues:add-cluster-queue",
    "queues:add-namespace",
    "queues:add-local-queue",
    "queues:add-flavor",
    "budgets:add",
]


@pytest.mark.parametrize("name", ADD_PAGES)
@pytest.mark.parametrize("user", ["alice", "victor", "nobody"])
def test_given_a_non_admin_when_an_add_page_is_opened_or_posted_then_403_and_nothing_is_stored(
    cluster, login, user, name
):
    client = login(user)

    assert client.get(reverse(name)).status_code == 403
    assert client.post(reverse(name), {"name": "sneaky"}).status_code == 403
    assert not PolicyChange.objects.exists()


@pytest.mark.parametrize(
    ("user", "url", "expected"),
    [
        ("alice", ("queues:delete-namespace", ["team-a"]), 403),  # hers: she sees it, may not delete it
        ("alice", ("queues:delete-namespace", ["team-b"]), 404),  # another tenant's: not even there
        ("alice", ("queues:delete-local-queue", ["team-a", "train"]), 403),
        ("bob", ("queues:delete-local-queue", ["team-a", "train"]), 404),
        ("alice", ("queues:delete-cohort", ["org"]), 404),
        ("alice", ("queues:delete-cluster-queue", ["cq-gpu"]), 403),
        ("bob", ("queues:delete-cluster-queue", ["cq-cpu"]), 404),  # none of bob's queues feed it
        ("alice", ("queues:delete-flavor", ["a100"]), 403),
        ("alice", ("queues:edit-flavor", ["a100"]), 403),
        ("alice", ("budgets:delete", ["a-gpu-hours"]), 403),
        ("bob", ("budgets:delete", ["a-gpu-hours"]), 404),
    ],
)
def test_given_a_tenant_when_a_delete_or_flavor_edit_is_posted_then_refused_and_nothing_changes(
    cluster, login, user, url, expected
):
    client = login(user)
    target = reverse(url[0], args=url[1])

    assert client.get(target).status_code == expected
    assert client.post(target, {"description": "x"}).status_code == expected
    assert Namespace.objects.filter(name="team-a").exists() and ResourceFlavor.objects.filter(name="a100").exists()
    assert Budget.objects.filter(name="a-gpu-hours").exists()
    assert not PolicyChange.objects.exists()


# -- delete --------------------------------------------------------------------------------------


def test_given_a_cluster_queue_with_admitted_work_when_delete_opened_then_the_page_says_so_and_offers_no_delete(
    cluster, login
):
    admitted = Workload.objects.filter(cluster_queue=cluster.cq_gpu, state=WorkloadState.ADMITTED).count()
    assert admitted > 0  # the cluster's history admitted team-b's jobs

    page = login("admin").get(reverse("queues:delete-cluster-queue", args=["cq-gpu"]))

    body = html.unescape(page.content.decode())
    assert page.status_code == 200
    assert f"{admitted} admitted workloads depend on it." in body
    assert "team-a/train" in body  # its LocalQueues are named
    assert 'id="confirm-delete"' not in body


@pytest.mark.parametrize(
    ("url", "model", "lookup"),
    [
        (("queues:delete-cluster-queue", ["cq-gpu"]), ClusterQueue, {"name": "cq-gpu"}),
        (
            ("queues:delete-local-queue", ["team-b", "train"]),
            LocalQueue,
            {"namespace__name": "team-b", "name": "train"},
        ),
        (("queues:delete-namespace", ["team-b"]), Namespace, {"name": "team-b"}),
        (("queues:delete-cohort", ["org"]), Cohort, {"name": "org"}),
        (("queues:delete-flavor", ["a100"]), ResourceFlavor, {"name": "a100"}),
    ],
    ids=["cluster-queue", "local-queue", "namespace", "cohort", "flavor"],
)
def test_given_admitted_work_depends_when_delete_posted_then_409_naming_it_and_nothing_is_deleted(
    cluster, login, url, model, lookup
):
    obj = model.objects.get(**lookup)
    client = login("admin")
    version = client.get(reverse(url[0], args=url[1])).context["version"]

    response = client.post(reverse(url[0], args=url[1]), {"version": version})

    body = html.unescape(response.content.decode())
    assert response.status_code == 409
    assert "was not deleted" in body and "admitted" in body
    assert model.objects.filter(pk=obj.pk).exists()
    assert not PolicyChange.objects.exists()


def test_given_an_unused_cohort_with_its_own_quota_when_deleted_then_it_and_its_quota_go_and_the_delete_is_audited(
    cluster, login
):
    cohort = Cohort.objects.create(name="spare")
    CohortQuota.objects.create(
        cohort=cohort, flavor=ResourceFlavor.objects.get(name="a100"), resource=GPU, nominal=8000
    )
    client = login("admin")
    page = client.get(reverse("queues:delete-cohort", args=["spare"]))
    assert "deleted with it" in page.content.decode()

    response = client.post(reverse("queues:delete-cohort", args=["spare"]), {"version": page.context["version"]})

    assert response.status_code == 302 and response["Location"] == reverse("queues:queue-tree")
    assert (
        not Cohort.objects.filter(name="spare").exists()
        and not CohortQuota.objects.filter(cohort_id=cohort.pk).exists()
    )
    change = ui_change("cohort", "delete")
    assert change.before["quotas"][0]["nominal"] == "8" and change.actor_name == "admin"


def test_given_an_unused_flavor_when_deleted_then_it_is_gone_and_audited(cluster, login):
    ResourceFlavor.objects.create(name="spot")
    client = login("admin")
    version = client.get(reverse("queues:delete-flavor", args=["spot"])).context["version"]

    response = client.post(reverse("queues:delete-flavor", args=["spot"]), {"version": version})

    assert response.status_code == 302 and response["Location"] == reverse("queues:flavors")
    assert not ResourceFlavor.objects.filter(name="spot").exists()
    assert ui_change("resourceflavor", "delete").object_repr == "spot"


def test_given_a_budget_when_deleted_then_it_is_gone_and_audited(cluster, login):
    client = login("admin")
    version = client.get(reverse("budgets:delete", args=["b-wall-time"])).context["version"]

    response = client.post(reverse("budgets:delete", args=["b-wall-time"]), {"version": version})

    assert response.status_code == 302 and response["Location"] == reverse("budgets:list")
    assert not Budget.objects.filter(name="b-wall-time").exists()
    assert ui_change("budget", "delete").before["allocated_hours"] == "10"


def test_given_an_object_changed_since_the_delete_page_was_opened_when_posted_then_409_and_it_stays(cluster, login):
    ResourceFlavor.objects.create(name="spot")
    client = login("admin")
    version = client.get(reverse("queues:delete-flavor", args=["spot"])).context["version"]
    other = Client()
    other.force_login(get_user_model().objects.create_user("admin-b", is_staff=True))
    page = other.get(reverse("queues:edit-flavor", args=["spot"]))
    other.post(
        reverse("queues:edit-flavor", args=["spot"]),
        {"version": page.context["form"]["version"].value(), "description": "now used for batch", "node_labels": ""},
    )

    response = client.post(reverse("queues:delete-flavor", args=["spot"]), {"version": version})

    body = html.unescape(response.content.decode())
    assert response.status_code == 409
    assert "admin-b changed description at " in body and "Nothing was deleted" in body
    assert ResourceFlavor.objects.filter(name="spot").exists()
    assert response.context["version"] == version_of(
        ResourceFlavor.objects.get(name="spot"), access_for(get_user_model().objects.get(username="admin"))
    )


# -- links -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("page", "links"),
    [
        (
            ("queues:queue-tree", []),
            ["queues:add-cohort", "queues:add-cluster-queue", "queues:add-namespace", "queues:add-local-queue"],
        ),
        (("queues:flavors", []), ["queues:add-flavor"]),
        (("queues:flavor", ["a100"]), [("queues:edit-flavor", ["a100"]), ("queues:delete-flavor", ["a100"])]),
        (("budgets:list", []), ["budgets:add"]),
        (("budgets:detail", ["a-gpu-hours"]), [("budgets:edit", ["a-gpu-hours"]), ("budgets:delete", ["a-gpu-hours"])]),
        (("queues:edit-cluster-queue", ["cq-gpu"]), [("queues:delete-cluster-queue", ["cq-gpu"])]),
        (
            ("queues:namespace", ["team-a"]),
            [("queues:edit-namespace", ["team-a"]), ("queues:delete-namespace", ["team-a"])],
        ),
        (("queues:cluster-queue", ["cq-gpu"]), [("queues:delete-cluster-queue", ["cq-gpu"])]),
        (("queues:cohort", ["org"]), [("queues:edit-cohort", ["org"]), ("queues:delete-cohort", ["org"])]),
        (
            ("queues:local-queue", ["team-a", "train"]),
            [("queues:delete-local-queue", ["team-a", "train"])],  # alice edits its stop policy, never deletes it
        ),
    ],
)
def test_given_admin_then_add_edit_and_delete_links_are_where_the_objects_are_shown_and_tenants_see_none(
    cluster, login, page, links
):
    urls = [reverse(link) if isinstance(link, str) else reverse(link[0], args=link[1]) for link in links]
    admin_body = login("admin").get(reverse(page[0], args=page[1])).content.decode()
    tenant = Client()
    tenant.force_login(get_user_model().objects.get(username="alice"))
    tenant_page = tenant.get(reverse(page[0], args=page[1]))

    for url in urls:
        assert f'href="{url}' in admin_body
        if tenant_page.status_code == 200:
            assert f'href="{url}' not in tenant_page.content.decode()


def test_given_the_api_when_a_cluster_queue_with_admitted_work_is_deleted_then_the_same_service_refuses_it(
    cluster, login
):
    response = login("admin").delete(f"/api/v1/cluster-queues/{cluster.cq_gpu.pk}/")

    assert response.status_code == 409
    assert response.json()["code"] == "protected"
    assert "admitted workloads depend on it" in response.json()["detail"]
    assert ClusterQueue.objects.filter(pk=cluster.cq_gpu.pk).exists() and not PolicyChange.objects.exists()


def test_given_admin_when_a_namespace_is_granted_priority_classes_then_they_are_stored_and_audited(cluster, login):
    from queues.models import WorkloadPriorityClass

    high = WorkloadPriorityClass.objects.create(name="high", value=100)
    WorkloadPriorityClass.objects.create(name="low", value=-10)
    client = login("admin")
    url = reverse("queues:edit-namespace", args=["team-b"])
    page = client.get(url)
    data = {
        "version": page.context["form"]["version"].value(),
        "weight": "1",
        "preemption_within_namespace": "Never",
        "allowed_priority_classes": ["high", "low"],
        "default_priority_class": str(high.pk),
        "description": "",
        **rows("quotas", []),
    }

    response = client.post(url, data)

    assert response.status_code == 302
    namespace = Namespace.objects.get(name="team-b")
    assert (sorted(namespace.allowed_priority_classes), namespace.default_priority_class_id) == (
        ["high", "low"],
        high.pk,
    )
    assert ui_change("namespace", "update").after["allowed_priority_classes"] == ["high", "low"]


def test_given_an_unknown_priority_class_when_posted_then_the_field_is_named_and_nothing_changes(cluster, login):
    data = {
        "weight": "1",
        "preemption_within_namespace": "Never",
        "allowed_priority_classes": ["vip"],
        **rows("quotas", []),
    }

    response = login("admin").post(reverse("queues:edit-namespace", args=["team-b"]), data)

    assert response.status_code == 400
    assert "vip" in " ".join(response.context["form"].errors["allowed_priority_classes"])
    assert Namespace.objects.get(name="team-b").allowed_priority_classes == []


def test_given_a_huge_label_name_when_a_flavor_is_added_then_the_error_quotes_it_clipped(cluster, login):
    response = login("admin").post(reverse("queues:add-flavor"), {"name": "h100", "node_labels": "Y" * 3000 + "=v"})

    errors = " ".join(response.context["form"].errors["node_labels"])
    assert response.status_code == 400
    assert "is not a valid label name" in errors and len(errors) < 200
    assert not ResourceFlavor.objects.filter(name="h100").exists()


def test_given_the_same_name_created_concurrently_when_saved_then_409_with_the_input_kept(cluster, login, monkeypatch):
    # The race (another admin's insert between validation and this insert) is made deterministic by
    # skipping the uniqueness check, so the database's unique constraint is what refuses the row.
    monkeypatch.setattr(ResourceFlavor, "validate_unique", lambda self, exclude=None: None)

    response = login("admin").post(reverse("queues:add-flavor"), {"name": "a100", "description": "mine"})

    assert response.status_code == 409
    assert "Nothing was saved" in html.unescape(response.content.decode())
    assert 'value="mine"' in response.content.decode()
    assert ResourceFlavor.objects.filter(name="a100").count() == 1 and not PolicyChange.objects.exists()


def test_given_an_idle_local_queue_when_moved_to_another_cluster_queue_then_it_feeds_that_one(cluster, login):
    idle = LocalQueue.objects.create(namespace=cluster.team_c, name="idle", cluster_queue=cluster.cq_cpu)
    url = reverse("queues:edit-local-queue", args=["team-c", "idle"])
    data = {"cluster_queue": str(cluster.cq_gpu.pk), "weight": "1", "stop_policy": "None", "description": ""}

    response = login("admin").post(url, data)

    assert response.status_code == 302
    assert LocalQueue.objects.get(pk=idle.pk).cluster_queue_id == cluster.cq_gpu.pk
    assert ui_change("localqueue", "update").changed_fields() == ["cluster_queue"]


def test_given_a_local_queue_holding_workloads_when_moved_then_the_models_rule_names_the_field(cluster, login):
    url = reverse("queues:edit-local-queue", args=["team-c", "etl"])
    data = {"cluster_queue": str(cluster.cq_gpu.pk), "weight": "1", "stop_policy": "None", "description": ""}

    response = login("admin").post(url, data)

    assert response.status_code == 400
    assert response.context["form"].errors["cluster_queue"]
    assert LocalQueue.objects.get(pk=cluster.c_etl.pk).cluster_queue_id == cluster.cq_cpu.pk
    assert not PolicyChange.objects.exists()
