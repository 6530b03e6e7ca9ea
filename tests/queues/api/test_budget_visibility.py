"""Tenants read their budgets through the API, but not where an admin's alerts go."""

from django.urls import reverse


def test_given_tenant_when_reading_own_budget_then_alert_destinations_are_hidden(world, clients):
    world.budget_a.alert_emails = "ops@example.org"
    world.budget_a.webhook_url = "https://hooks.example.org/secret-token"
    world.budget_a.save()
    url = reverse("budget-detail", args=[world.budget_a.pk])

    tenant = clients["viewer_a"].get(url).json()
    admin = clients["admin"].get(url).json()

    assert tenant["name"] == world.budget_a.name
    assert "alert_emails" not in tenant and "webhook_url" not in tenant
    assert admin["webhook_url"] == "https://hooks.example.org/secret-token"
