"""ETag and If-Match on every policy object (core.api.etags): a strong ETag on detail answers,
a stale If-Match is a 412 naming who changed what and writes nothing, the fresh one passes,
and a write through any other surface changes the ETag."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest
from django.test import override_settings
from django.urls import reverse

from budgets.models import Budget
from budgets.services import update_budget
from core.audit import record_change
from core.models import PolicyChange, Surface
from queues.models import ClusterQueue, ClusterQueueQuota, Cohort, LocalQueue, Namespace
from queues.services.policy import save_policy_object

pytestmark = pytest.mark.django_db

STRONG_ETAG = re.compile(r'^"[0-9a-f]{32}"$')


# (collection, the world's object, a PATCH that changes it, the changed field, how to read it back)
POLICY_OBJECTS = [
    ("resource-flavors", "spare_flavor", {"node_labels": {"zone": "b"}}, "node_labels"),
    ("cohorts", "cohort", {"weight": 3}, "weight"),
    ("cluster-queues", "cluster_queue", {"weight": 3}, "weight"),
    ("namespaces", "ns_a", {"weight": 3}, "weight"),
    ("local-queues", "lq_a", {"weight": 3}, "weight"),
    ("budgets", "budget_a", {"allocated_hours": 120}, "allocated_hours"),
]
IDS = [collection for collection, *_ in POLICY_OBJECTS]


@pytest.fixture(autouse=True)
def no_broker(monkeypatch):
    """A budget write asks for a reconcile after the commit (never reached in these rolled-back
    tests); keep it off the shared broker all the same."""
    from budgets import services

    monkeypatch.setattr(services, "request_reconcile", lambda budget_id: None)


def url(collection: str, obj: Any) -> str:
    return f"/api/v1/{collection}/{obj.pk}/"


def stored(obj: Any, field: str) -> Any:
    return getattr(type(obj).objects.get(pk=obj.pk), field)


@pytest.mark.parametrize(("collection", "name", "patch", "field"), POLICY_OBJECTS, ids=IDS)
def test_given_a_fresh_etag_then_the_patch_passes_and_answers_the_new_etag(
    world, clients, collection, name, patch, field
):
    obj = getattr(world, name)
    admin = clients["admin"]
    read = admin.get(url(collection, obj))

    written = admin.patch(url(collection, obj), patch, format="json", HTTP_IF_MATCH=read["ETag"])

    assert read.status_code == 200 and STRONG_ETAG.match(read["ETag"])
    assert written.status_code == 200, written.json()
    assert STRONG_ETAG.match(written["ETag"]) and written["ETag"] != read["ETag"]
    assert admin.get(url(collection, obj))["ETag"] == written["ETag"]


@pytest.mark.parametrize(("collection", "name", "patch", "field"), POLICY_OBJECTS, ids=IDS)
def test_given_a_stale_etag_then_the_patch_is_a_412_naming_the_change_and_writes_nothing(
    world, clients, collection, name, patch, field
):
    obj = getattr(world, name)
    admin = clients["admin"]
    stale = admin.get(url(collection, obj))["ETag"]
    assert admin.patch(url(collection, obj), patch, format="json", HTTP_IF_MATCH=stale).status_code == 200
    value, changes = stored(obj, field), PolicyChange.objects.count()
    other = {"node_labels": {"zone": "c"}} if field == "node_labels" else {field: 7}

    refused = admin.patch(url(collection, obj), other, format="json", HTTP_IF_MATCH=stale)

    assert refused.status_code == 412
    body = refused.json()
    assert body["code"] == "precondition_failed"
    assert body["last_change"]["actor"] == "admin"
    assert body["last_change"]["surface"] == "api"
    assert body["last_change"]["changed_fields"] == [field]
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", body["last_change"]["at"])
    assert f"admin changed {field.replace('_', ' ')} at " in body["detail"]
    assert stored(obj, field) == value
    assert PolicyChange.objects.count() == changes


@pytest.mark.parametrize(("collection", "name", "patch", "field"), POLICY_OBJECTS, ids=IDS)
def test_given_a_stale_etag_then_put_and_delete_are_412_too(world, clients, collection, name, patch, field):
    obj = getattr(world, name)
    admin = clients["admin"]
    read = admin.get(url(collection, obj))
    stale = read["ETag"]
    assert admin.patch(url(collection, obj), patch, format="json", HTTP_IF_MATCH=stale).status_code == 200
    body = {key: value for key, value in read.json().items() if key not in {"id"}}

    put = admin.put(url(collection, obj), body, format="json", HTTP_IF_MATCH=stale)
    deleted = admin.delete(url(collection, obj), HTTP_IF_MATCH=stale)

    assert (put.status_code, deleted.status_code) == (412, 412)
    assert type(obj).objects.filter(pk=obj.pk).exists()


def test_given_no_if_match_then_writes_stay_unconditional(world, clients):
    admin = clients["admin"]
    stale = admin.get(url("cluster-queues", world.cluster_queue))["ETag"]
    admin.patch(url("cluster-queues", world.cluster_queue), {"weight": 2}, format="json")

    response = admin.patch(url("cluster-queues", world.cluster_queue), {"weight": 5}, format="json")

    assert response.status_code == 200
    assert response["ETag"] != stale
    assert stored(world.cluster_queue, "weight") == Decimal(5)


@override_settings(API_REQUIRE_IF_MATCH=True)
def test_given_if_match_required_then_a_write_without_it_is_a_428_and_one_with_it_passes(world, clients):
    admin = clients["admin"]
    read = admin.get(url("cohorts", world.cohort))

    missing = admin.patch(url("cohorts", world.cohort), {"weight": 4}, format="json")
    deleted = admin.delete(url("cohorts", world.spare_cohort))
    given = admin.patch(url("cohorts", world.cohort), {"weight": 4}, format="json", HTTP_IF_MATCH=read["ETag"])

    assert (missing.status_code, deleted.status_code) == (428, 428)
    assert missing.json()["code"] == "precondition_required"
    assert "If-Match" in missing.json()["detail"]
    assert Cohort.objects.filter(pk=world.spare_cohort.pk).exists()
    assert given.status_code == 200
    assert stored(world.cohort, "weight") == Decimal(4)


def test_given_if_match_star_then_the_write_passes_whatever_the_version(world, clients):
    response = clients["admin"].patch(url("namespaces", world.ns_a), {"weight": 4}, format="json", HTTP_IF_MATCH="*")

    assert response.status_code == 200
    assert stored(world.ns_a, "weight") == Decimal(4)


def test_given_a_list_holding_the_current_etag_then_the_write_passes(world, clients):
    admin = clients["admin"]
    current = admin.get(url("namespaces", world.ns_a))["ETag"]

    response = admin.patch(
        url("namespaces", world.ns_a), {"weight": 4}, format="json", HTTP_IF_MATCH=f'"0000", {current}'
    )

    assert response.status_code == 200


def test_given_the_current_etag_marked_weak_then_it_never_matches(world, clients):
    """RFC 9110 13.1.1: If-Match uses the strong comparison, which no weak tag passes."""
    admin = clients["admin"]
    current = admin.get(url("namespaces", world.ns_a))["ETag"]

    response = admin.patch(url("namespaces", world.ns_a), {"weight": 4}, format="json", HTTP_IF_MATCH=f"W/{current}")

    assert response.status_code == 412
    assert stored(world.ns_a, "weight") == Decimal(2)


@pytest.mark.parametrize("value", ["abc", "", '"unterminated', "W/abc", '"a" "b"', '"x' + "y" * 1100 + '"'])
def test_given_a_malformed_if_match_then_a_400_names_the_header_and_nothing_changes(world, clients, value):
    response = clients["admin"].patch(url("namespaces", world.ns_a), {"weight": 4}, format="json", HTTP_IF_MATCH=value)

    assert response.status_code == 400
    assert list(response.json()) == ["If-Match"]
    assert "y" * 50 not in response.content.decode()  # the value is not echoed
    assert stored(world.ns_a, "weight") == Decimal(2)


def test_given_a_stale_etag_with_an_invalid_body_then_the_precondition_answers_first(world, clients):
    """RFC 9110 13.2.1: preconditions are evaluated before the request content."""
    admin = clients["admin"]
    stale = admin.get(url("cluster-queues", world.cluster_queue))["ETag"]
    admin.patch(url("cluster-queues", world.cluster_queue), {"weight": 2}, format="json")

    response = admin.patch(
        url("cluster-queues", world.cluster_queue), {"weight": -1}, format="json", HTTP_IF_MATCH=stale
    )

    assert response.status_code == 412


def test_given_a_stale_etag_on_an_unknown_object_then_404_before_the_precondition(world, clients):
    response = clients["admin"].patch(
        "/api/v1/cluster-queues/999999/", {"weight": 2}, format="json", HTTP_IF_MATCH='"0"'
    )

    assert response.status_code == 404


def test_given_a_tenant_with_an_if_match_then_roles_and_visibility_answer_before_the_precondition(world, clients):
    """Another tenant's LocalQueue stays a 404, a write the role may not make a 403: the
    precondition reveals neither existence nor version."""
    stale = '"00000000000000000000000000000000"'

    other_tenant = clients["tenant_b"].patch(
        url("local-queues", world.lq_a), {"description": "x"}, format="json", HTTP_IF_MATCH=stale
    )
    viewer = clients["viewer_a"].patch(
        url("local-queues", world.lq_a), {"description": "x"}, format="json", HTTP_IF_MATCH=stale
    )
    budget = clients["editor_a"].patch(
        url("budgets", world.budget_a), {"allocated_hours": 1}, format="json", HTTP_IF_MATCH=stale
    )
    cluster_wide = clients["editor_a"].patch(
        url("cluster-queues", world.cluster_queue), {"weight": 1}, format="json", HTTP_IF_MATCH=stale
    )

    assert (other_tenant.status_code, viewer.status_code, budget.status_code, cluster_wide.status_code) == (
        404,
        403,
        403,
        403,
    )


def test_given_a_tenant_editor_with_a_stale_etag_then_the_412_names_no_other_tenant(world, clients):
    """The 412 names the actor, time, surface and changed fields only: never the audit row's
    values, note or other objects, which may name another tenant's queues."""
    editor = clients["editor_a"]
    stale = editor.get(url("local-queues", world.lq_a))["ETag"]
    queue = LocalQueue.objects.get(pk=world.lq_a.pk)
    queue.cluster_queue = world.spare_cluster_queue
    before = {"cluster_queue": "shared", "description": "next to team-b/main"}
    queue.description = "moved off team-b's ClusterQueue"
    queue.save()
    record_change(
        instance=queue,
        action=PolicyChange.Action.UPDATE,
        before=before,
        after={"cluster_queue": "spare", "description": queue.description},
        surface=Surface.SYSTEM,
        note="team-b/main and namespace team-b asked for it",
    )

    response = editor.patch(
        url("local-queues", world.lq_a), {"description": "mine"}, format="json", HTTP_IF_MATCH=stale
    )

    assert response.status_code == 412
    assert "team-b" not in response.content.decode()
    assert response.json()["last_change"] == {
        "actor": "the system",
        "surface": "system",
        "action": "update",
        "at": response.json()["last_change"]["at"],
        "changed_fields": ["cluster_queue", "description"],
    }


def test_given_a_tenant_then_a_staff_only_change_moves_neither_its_etag_nor_its_412_fields(world, clients):
    """A budget's alert destinations are staff-only: a tenant's ETag of the budget ignores them,
    and the admin's does not."""
    admin, viewer = clients["admin"], clients["editor_a"]
    before = {
        "admin": admin.get(url("budgets", world.budget_a))["ETag"],
        "tenant": viewer.get(url("budgets", world.budget_a))["ETag"],
    }

    update_budget(Budget.objects.get(pk=world.budget_a.pk), alert_emails="ops@example.org", surface=Surface.CLI)

    assert admin.get(url("budgets", world.budget_a))["ETag"] != before["admin"]
    assert viewer.get(url("budgets", world.budget_a))["ETag"] == before["tenant"]


def test_given_a_write_through_the_pages_then_the_api_etag_changes(world, clients, client):
    admin = clients["admin"]
    stale = admin.get(url("cluster-queues", world.cluster_queue))["ETag"]
    client.force_login(world.users["admin"])
    page = client.get(reverse("queues:edit-cluster-queue", args=["shared"]))
    data = {**_form_data(page), "weight": "6"}

    saved = client.post(reverse("queues:edit-cluster-queue", args=["shared"]), data)
    refused = admin.patch(url("cluster-queues", world.cluster_queue), {"weight": 1}, format="json", HTTP_IF_MATCH=stale)

    assert saved.status_code == 302, (saved.context["form"].errors, saved.context["formset"].errors, _form_data(page))
    assert admin.get(url("cluster-queues", world.cluster_queue))["ETag"] != stale
    assert refused.status_code == 412
    assert refused.json()["last_change"]["surface"] == "ui"
    assert refused.json()["last_change"]["changed_fields"] == ["weight"]


def _form_data(page: Any) -> dict[str, Any]:
    """What a browser posts back from an edit page: every form and formset field as rendered."""
    form, formset = page.context["form"], page.context["formset"]
    data: dict[str, Any] = {}
    for bound in form:
        value = bound.value()
        data[bound.html_name] = "" if value is None else value
    if formset is not None:
        for bound in formset.management_form:
            data[bound.html_name] = bound.value()
        for row in formset.forms:
            for bound in row:
                value = bound.value()
                if value is not None and value is not False:
                    data[bound.html_name] = value
    return data


def test_given_a_quota_change_alone_then_the_etag_changes(world, clients):
    admin = clients["admin"]
    before = admin.get(url("cluster-queues", world.cluster_queue))["ETag"]
    ClusterQueueQuota.objects.filter(cluster_queue=world.cluster_queue, resource="cpu").update(nominal=33_000)

    assert admin.get(url("cluster-queues", world.cluster_queue))["ETag"] != before


def test_given_rows_replaced_by_equal_rows_then_the_etag_stays(world, clients):
    """A save replaces every quota row (new ids); the same quota is the same version."""
    admin = clients["admin"]
    queue = ClusterQueue.objects.get(pk=world.cluster_queue.pk)
    before = admin.get(url("cluster-queues", queue))["ETag"]
    rows = [
        ClusterQueueQuota(flavor=row.flavor, resource=row.resource, nominal=row.nominal, flavor_order=row.flavor_order)
        for row in queue.quotas.all()
    ]

    save_policy_object(queue, quotas=rows, actor=None, surface=Surface.CLI)

    assert admin.get(url("cluster-queues", queue))["ETag"] == before


def test_given_a_usage_sample_then_the_etag_stays(world, clients):
    """The control loop rewrites the fair-sharing status on every pass: not part of the version."""
    admin = clients["admin"]
    before = {
        name: admin.get(url(c, getattr(world, name)))["ETag"]
        for c, name in (
            ("local-queues", "lq_a"),
            ("namespaces", "ns_a"),
            ("cluster-queues", "cluster_queue"),
            ("cohorts", "cohort"),
        )
    }
    for model in (LocalQueue, Namespace, ClusterQueue, Cohort):
        model.objects.update(consumed_resources={"cpu": 1234.5}, weighted_share=0.7)
    LocalQueue.objects.update(historical_share={"cpu": 0.1})

    after = {
        name: admin.get(url(c, getattr(world, name)))["ETag"]
        for c, name in (
            ("local-queues", "lq_a"),
            ("namespaces", "ns_a"),
            ("cluster-queues", "cluster_queue"),
            ("cohorts", "cohort"),
        )
    }

    assert after == before


def test_given_a_create_then_the_201_carries_the_etag_a_get_answers(world, clients):
    admin = clients["admin"]

    created = admin.post("/api/v1/cohorts/", {"name": "fresh", "weight": 1}, format="json")

    assert created.status_code == 201
    assert STRONG_ETAG.match(created["ETag"])
    assert admin.get(f"/api/v1/cohorts/{created.json()['id']}/")["ETag"] == created["ETag"]


def test_given_the_schema_then_it_documents_etag_if_match_412_and_428(client):
    document = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    detail = document["paths"]["/api/v1/cluster-queues/{id}/"]

    assert "ETag" in detail["get"]["responses"]["200"]["headers"]
    for method in ("put", "patch", "delete"):
        parameters = {p["name"]: p for p in detail[method]["parameters"] if p["in"] == "header"}
        assert "If-Match" in parameters and not parameters["If-Match"].get("required", False)
        assert {"412", "428"} <= set(detail[method]["responses"])
    assert "If-Match" not in {
        p["name"] for p in document["paths"]["/api/v1/workloads/{id}/"]["get"].get("parameters", [])
    }


@pytest.mark.parametrize(
    ("collection", "name"),
    [
        ("resource-flavors", "spare_flavor"),
        ("cohorts", "spare_cohort"),
        ("cluster-queues", "spare_cluster_queue"),
        ("namespaces", "ns_a_spare"),
        ("local-queues", "lq_a_spare"),
        ("budgets", "budget_b"),
    ],
)
def test_given_the_current_etag_then_a_delete_passes_and_is_audited(world, clients, collection, name):
    obj = getattr(world, name)
    admin = clients["admin"]
    current = admin.get(url(collection, obj))["ETag"]

    response = admin.delete(url(collection, obj), HTTP_IF_MATCH=current)

    assert response.status_code == 204
    assert not type(obj).objects.filter(pk=obj.pk).exists()
    assert PolicyChange.objects.filter(action="delete", object_id=str(obj.pk), surface="api").count() == 1


def test_given_a_write_in_the_django_admin_then_the_api_etag_changes_and_the_412_says_so(world, clients, client):
    admin = clients["admin"]
    flavor = world.spare_flavor
    stale = admin.get(url("resource-flavors", flavor))["ETag"]
    superuser = type(world.users["admin"]).objects.get(pk=world.users["admin"].pk)  # not the shared copy
    superuser.is_superuser = True  # the Django admin's change permission (rolled back with the test)
    superuser.save(update_fields=["is_superuser"])
    client.force_login(superuser)

    saved = client.post(
        reverse("admin:queues_resourceflavor_change", args=[flavor.pk]),
        {
            "name": "spare",
            "cluster": flavor.cluster_id,
            "description": "changed in the admin",
            "kueue_extra": "{}",
            "node_labels": "{}",
        },
    )
    refused = admin.patch(url("resource-flavors", flavor), {"description": "mine"}, format="json", HTTP_IF_MATCH=stale)

    assert saved.status_code == 302, saved.content.decode()[:2000]
    assert refused.status_code == 412
    assert refused.json()["last_change"]["surface"] == "admin"
    assert refused.json()["last_change"]["changed_fields"] == ["description"]
