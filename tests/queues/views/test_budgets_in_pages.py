"""Budgets on the dashboard (the budgets app's status): admins see all, tenants their own."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from budgets.models import Budget
from budgets.services import reconcile_all_budgets

pytestmark = pytest.mark.django_db


def test_given_budgets_when_admin_opens_overview_then_all_are_listed_fullest_first_with_status(cluster, login):
    response = login("admin").get(reverse("queues:home"))
    overview = response.context["overview"]
    body = response.content.decode()

    percents = [chip.status.percent for chip in overview.budgets]
    assert {chip.name for chip in overview.budgets} == {"a-gpu-hours", "b-wall-time"}
    assert percents == sorted(percents, reverse=True)
    assert all(chip.status.measured for chip in overview.budgets)
    assert reverse("budgets:detail", args=["a-gpu-hours"]) in body
    assert reverse("budgets:edit", args=["b-wall-time"]) in body


@pytest.mark.parametrize("user", ["alice", "victor"])
def test_given_tenant_when_overview_opened_then_only_budgets_holding_its_work_are_listed(cluster, login, user):
    response = login(user).get(reverse("queues:home"))
    body = response.content.decode()

    assert [chip.name for chip in response.context["overview"].budgets] == ["a-gpu-hours"]
    assert "b-wall-time" not in body
    assert reverse("budgets:edit", args=["a-gpu-hours"]) not in body


def test_given_running_gpu_work_when_local_queue_opened_then_its_budget_shows_use_this_period(cluster, login):
    response = login("alice").get(reverse("queues:local-queue", args=["team-a", "train"]))
    chip = response.context["detail"].budgets[0]

    assert chip.name == "a-gpu-hours" and chip.unit == "GPU-hours"
    assert chip.status.used_hours > 0 and 0 < chip.status.percent < 100
    assert "of 100" in response.content.decode()


def test_given_budgets_when_tree_opened_then_chips_show_percent_used(cluster, login):
    body = login("admin").get(reverse("queues:queue-tree")).content.decode()

    assert ">a-gpu-hours · " in body and ">b-wall-time · " in body


def test_given_budget_changes_when_tenant_opens_audit_log_then_only_its_budgets_appear(cluster, login):
    admin = login("admin")
    for name in ("a-gpu-hours", "b-wall-time"):
        admin.post(
            reverse("budgets:edit", args=[name]), {"allocated_hours": "500", "renewal": "monthly", "action": "Hold"}
        )
    admin.logout()

    changes = login("victor").get(reverse("queues:audit-log")).context["audit"].rows

    assert [row.change.object_repr for row in changes] == ["a-gpu-hours"]


def test_given_budgets_app_when_sidebar_drawn_then_it_links_the_budget_pages(cluster, login):
    body = login("victor").get(reverse("queues:home")).content.decode()

    assert f'href="{reverse("budgets:list")}"' in body


def _states(body: str) -> dict[str, str]:
    """``data-budget-state="name"`` badges of a page: budget name -> the state label shown."""
    return dict(re.findall(r'data-budget-state="([^"]+)"[^>]*>([^<]+)<', body))


def test_given_a_budget_forecast_to_run_out_then_every_surface_says_at_risk(cluster, login):
    # Given: a-gpu-hours used 85% of a lowered allocation with its work still running (so it is
    # forecast to run out before it resets), b-wall-time fine.
    budget = Budget.objects.get(name="a-gpu-hours")
    used = login("admin").get(reverse("budgets:detail", args=["a-gpu-hours"])).context["status"].used_hours
    budget.allocated_hours = (used / Decimal("0.85")).quantize(Decimal("0.001"))
    budget.save()
    reconcile_all_budgets()
    admin = login("admin")

    # When: the overview, the budgets list, each budget's page and the API are read.
    overview = _states(admin.get(reverse("queues:home")).content.decode())
    listing = _states(admin.get(reverse("budgets:list")).content.decode())
    pages = {}
    for name in ("a-gpu-hours", "b-wall-time"):
        pages.update(_states(admin.get(reverse("budgets:detail", args=[name])).content.decode()))
    api = {row["name"]: row["status"]["state"] for row in admin.get("/api/v1/budgets/").json()["results"]}

    # Then: one state per budget, the same words everywhere.
    assert overview["a-gpu-hours"] == "at risk"
    rows = {row["name"]: row["status"] for row in admin.get("/api/v1/budgets/").json()["results"]}
    assert rows["a-gpu-hours"]["state_reason"].startswith("forecast to run out")
    assert overview == listing == pages
    assert {name: label.replace(" ", "_") for name, label in overview.items()} == api
