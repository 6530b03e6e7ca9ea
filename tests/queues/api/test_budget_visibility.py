"""Tenants read their budgets through the API, but not where an admin's alerts go."""

from django.urls import reverse


def test_given_tenant_when_reading_own_budget_then_alert_destinations_are_hidden(world, clients):
    world.budget_a.alert_emails = "ops@example.org"
    world.budget_a.webhook_url = "https://93.184.215.14/secret-token"
    world.budget_a.save()
    url = reverse("budget-detail", args=[world.budget_a.pk])

    tenant = clients["viewer_a"].get(url).json()
    admin = clients["admin"].get(url).json()

    assert tenant["name"] == world.budget_a.name
    assert "alert_emails" not in tenant and "webhook_url" not in tenant
    assert admin["webhook_url"] == "https://93.184.215.14/secret-token"


def test_given_budget_when_read_then_status_of_the_current_period_comes_with_it(world, clients):
    body = clients["viewer_a"].get(f"/api/v1/budgets/{world.budget_a.pk}/").json()

    assert set(body["status"]) >= {"used_hours", "remaining_hours", "percent", "forecast_exhausted_at", "held"}
    assert body["status"]["held"] is False


def test_given_tenant_b_when_listing_budget_events_then_tenant_a_events_are_absent(world, clients):
    rows_b = clients["tenant_b"].get("/api/v1/budget-events/").json()["results"]
    rows_a = clients["viewer_a"].get("/api/v1/budget-events/", {"budget": "a-hours"}).json()["results"]

    assert world.event_a.pk not in {row["id"] for row in rows_b}
    assert [row["message"] for row in rows_a] == ["a-hours at 81%"]


def test_given_a_budget_change_in_the_audit_trail_when_a_tenant_reads_it_then_staff_only_fields_are_gone(
    world, clients
):
    from budgets.services import update_budget

    update_budget(
        world.budget_a,
        allocated_hours=150,
        webhook_url="https://93.184.215.14/secret-token",
        alert_emails="ops@example.org",
    )
    url = "/api/v1/policy-changes/?object_type=budget"

    tenant = clients["viewer_a"].get(url).json()["results"]
    admin = clients["admin"].get(url).json()["results"]

    assert len(tenant) == 1 and len(admin) == 1
    assert tenant[0]["changed_fields"] == ["allocated_hours"]
    assert "webhook_url" not in tenant[0]["before"] and "webhook_url" not in tenant[0]["after"]
    assert "alert_emails" not in tenant[0]["after"]
    assert "secret-token" not in clients["viewer_a"].get(f"/api/v1/policy-changes/{tenant[0]['id']}/").content.decode()
    assert admin[0]["changed_fields"] == ["alert_emails", "allocated_hours", "webhook_url"]
    assert admin[0]["after"]["webhook_url"] == "https://93.184.215.14/secret-token"
