"""Webhook endpoints and deliveries for admins only, in the API (/api/v1/webhook-endpoints/,
/api/v1/webhook-deliveries/) and the Django admin: the secret is shown once (creation, rotation)
and nowhere else, writes are audited, a budget's own endpoint follows its budget."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.test import Client
from rest_framework.test import APIClient

from budgets.models import Budget
from core import webhooks_services
from core.audit import audited_save
from core.models import PolicyChange, Surface, TenantMembership, WebhookDelivery, WebhookEndpoint
from queues.models import ClusterQueue, LocalQueue, Namespace
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PUBLIC = "https://93.184.215.14/hooks"


@pytest.fixture
def people():
    namespace = Namespace.objects.create(name="team-a", weight=Decimal(1))
    tenant = UserFactory(username="alice")
    TenantMembership.objects.create(user=tenant, namespace=namespace, role=TenantMembership.Role.EDITOR)
    admin = UserFactory(username="ops", is_staff=True, is_superuser=True)
    return {"admin": admin, "tenant": tenant, "namespace": namespace}


def namespace_delivery() -> WebhookDelivery:
    """The delivery of the namespace's change (the endpoint's own creation was announced too)."""
    return WebhookDelivery.objects.get(source_id=PolicyChange.objects.get(object_type="namespace").pk)


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_given_an_admin_then_the_secret_is_in_the_creation_answer_only_and_never_in_lists_or_the_audit(people):
    client = api(people["admin"])

    created = client.post(
        "/api/v1/webhook-endpoints/", {"name": "ops", "url": PUBLIC, "events": ["policy.changed"]}, format="json"
    )
    secret = created.json()["secret"]
    endpoint_id = created.json()["endpoint"]["id"]
    listed = client.get("/api/v1/webhook-endpoints/")
    one = client.get(f"/api/v1/webhook-endpoints/{endpoint_id}/")

    assert created.status_code == 201 and created["Cache-Control"] == "no-store"
    assert secret.startswith("whsec_")
    assert secret not in listed.content.decode() and secret not in one.content.decode()
    assert "secret" not in one.json()
    change = PolicyChange.objects.get(object_type="webhookendpoint")
    assert (change.action, change.actor_name, change.surface) == ("create", "ops", Surface.API)
    assert secret not in json.dumps([change.before, change.after])


def test_given_a_rotation_through_the_api_then_the_new_secret_is_answered_once_and_both_sign_meanwhile(people):
    client = api(people["admin"])
    created = client.post(
        "/api/v1/webhook-endpoints/", {"name": "ops", "url": PUBLIC, "events": ["budget.*"]}, format="json"
    ).json()
    endpoint_id = created["endpoint"]["id"]

    rotated = client.post(
        f"/api/v1/webhook-endpoints/{endpoint_id}/rotate/", {"keep_previous_seconds": 3600}, format="json"
    )
    ended = client.post(f"/api/v1/webhook-endpoints/{endpoint_id}/end-rotation/")

    assert rotated.status_code == 200 and rotated.json()["secret"] != created["secret"]
    assert rotated.json()["endpoint"]["rotating"] is True
    assert ended.status_code == 200 and ended.json()["rotating"] is False
    stored = WebhookEndpoint.objects.get(pk=endpoint_id)
    assert (stored.secret, stored.previous_secret) == (rotated.json()["secret"], "")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "ops", "url": "http://169.254.169.254/", "events": ["policy.changed"]}, "url"),
        ({"name": "ops", "url": PUBLIC, "events": ["budget.Nope"]}, "events"),
        ({"name": "ops", "url": PUBLIC, "events": []}, "events"),
        ({"name": "budget:1 x", "url": PUBLIC, "events": ["policy.changed"]}, "name"),
    ],
)
def test_given_bad_input_then_the_api_answers_400_naming_the_field(people, body, field):
    answer = api(people["admin"]).post("/api/v1/webhook-endpoints/", body, format="json")

    assert answer.status_code == 400 and field in answer.json()
    assert not WebhookEndpoint.objects.exists()


def test_given_a_tenant_then_every_webhook_route_is_forbidden(people):
    endpoint, _ = webhooks_services.create_endpoint(name="ops", url=PUBLIC, events=["policy.changed"])
    client = api(people["tenant"])

    answers = [
        client.get("/api/v1/webhook-endpoints/").status_code,
        client.get(f"/api/v1/webhook-endpoints/{endpoint.pk}/").status_code,
        client.post(f"/api/v1/webhook-endpoints/{endpoint.pk}/rotate/", {}, format="json").status_code,
        client.post(
            "/api/v1/webhook-endpoints/", {"name": "x", "url": PUBLIC, "events": ["budget.*"]}, format="json"
        ).status_code,
        client.get("/api/v1/webhook-deliveries/").status_code,
    ]

    assert answers == [403] * 5
    assert WebhookEndpoint.objects.count() == 1


def test_given_a_budget_with_a_webhook_then_its_endpoint_follows_the_budget_and_only_its_secret_is_managed(people):
    cq = ClusterQueue.objects.create(name="shared")
    lq = LocalQueue.objects.create(namespace=people["namespace"], name="main", cluster_queue=cq)
    budget = Budget.objects.create(name="team-hours", local_queue=lq, allocated_hours=Decimal(10), webhook_url=PUBLIC)
    endpoint = budget.webhook_endpoint
    client = api(people["admin"])

    changed = client.patch(f"/api/v1/webhook-endpoints/{endpoint.pk}/", {"enabled": False}, format="json")
    deleted = client.delete(f"/api/v1/webhook-endpoints/{endpoint.pk}/")
    rotated = client.post(
        f"/api/v1/webhook-endpoints/{endpoint.pk}/rotate/", {"keep_previous_seconds": 0}, format="json"
    )
    budget.webhook_url = "https://93.184.215.15/other"
    budget.save()
    endpoint.refresh_from_db()

    assert (changed.status_code, deleted.status_code, rotated.status_code) == (409, 409, 200)
    assert (endpoint.scope, endpoint.url, endpoint.enabled, endpoint.events) == (
        "budget",
        budget.webhook_url,
        True,
        ["budget.*"],
    )
    assert endpoint.secret == rotated.json()["secret"] and endpoint.previous_secret == ""
    budget.webhook_url = ""
    budget.save()
    endpoint.refresh_from_db()
    assert endpoint.enabled is False  # no URL, nothing is sent; the secret stays for when one comes back
    budget.delete()
    assert not WebhookEndpoint.objects.filter(pk=endpoint.pk).exists()


def test_given_deliveries_then_the_admin_list_shows_their_state_and_redeliver_queues_one_again(people):
    webhooks_services.create_endpoint(name="ops", url=PUBLIC, events=["policy.changed"])
    people["namespace"].weight = Decimal(2)
    audited_save(people["namespace"])
    delivery = namespace_delivery()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status="failed", attempts=7, last_error="HTTP 503", last_status_code=503
    )
    client = api(people["admin"])

    listed = client.get("/api/v1/webhook-deliveries/?status=failed").json()["results"]
    detail = client.get(f"/api/v1/webhook-deliveries/{delivery.pk}/").json()
    again = client.post(f"/api/v1/webhook-deliveries/{delivery.pk}/redeliver/")

    assert [
        (row["endpoint"], row["status"], row["attempts"], row["last_status_code"], row["last_error"]) for row in listed
    ] == [("ops", "failed", 7, 503, "HTTP 503")]
    assert detail["payload"]["type"] == "policy.changed" and detail["payload"]["data"]["objectType"] == "namespace"
    assert again.status_code == 202 and (again.json()["status"], again.json()["attempts"]) == ("pending", 0)
    assert client.post(f"/api/v1/webhook-deliveries/{delivery.pk}/").status_code == 405


def test_given_the_django_admin_then_adding_an_endpoint_shows_its_secret_once_and_the_list_never(people):
    client = Client()
    client.force_login(people["admin"])

    page = client.post(
        "/admin/core/webhookendpoint/add/",
        {"name": "ops", "url": PUBLIC, "events": '["policy.changed"]', "enabled": "on"},
    )
    endpoint = WebhookEndpoint.objects.get()
    listing = client.get("/admin/core/webhookendpoint/")
    change_page = client.get(f"/admin/core/webhookendpoint/{endpoint.pk}/change/")

    assert page.status_code == 200 and endpoint.secret in page.content.decode()
    assert "no-store" in page["Cache-Control"]
    assert endpoint.secret not in listing.content.decode() and endpoint.secret not in change_page.content.decode()
    assert PolicyChange.objects.get(object_type="webhookendpoint").surface == Surface.ADMIN

    rotated = client.post(
        "/admin/core/webhookendpoint/", {"action": "rotate_secret", "_selected_action": [endpoint.pk]}
    )
    endpoint.refresh_from_db()
    assert rotated.status_code == 200 and endpoint.secret in rotated.content.decode()
    assert endpoint.previous_secret and endpoint.previous_secret not in rotated.content.decode()


def test_given_the_django_admin_then_deliveries_are_listed_read_only_and_can_be_redelivered(people):
    webhooks_services.create_endpoint(name="ops", url=PUBLIC, events=["policy.changed"])
    people["namespace"].weight = Decimal(2)
    audited_save(people["namespace"])
    delivery = namespace_delivery()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(status="failed", last_error="HTTP 500")
    client = Client()
    client.force_login(people["admin"])

    listing = client.get("/admin/core/webhookdelivery/")
    redelivered = client.post(
        "/admin/core/webhookdelivery/", {"action": "redeliver", "_selected_action": [delivery.pk]}, follow=True
    )

    assert listing.status_code == 200 and "HTTP 500" in listing.content.decode()
    assert client.get("/admin/core/webhookdelivery/add/").status_code == 403
    assert redelivered.status_code == 200
    delivery.refresh_from_db()
    assert (delivery.status, delivery.last_error) == ("pending", "")
