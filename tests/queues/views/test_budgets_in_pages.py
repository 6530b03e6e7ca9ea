"""Budgets on the dashboard (the budgets app's status): admins see all, tenants their own."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_given_budgets_when_admin_opens_overview_then_all_are_listed_fullest_first_with_status(cluster, login):
    response = login("admin").get(reverse("home"))
    overview = response.context["overview"]
    body = response.content.decode()

    percents = [chip.status.percent for chip in overview.budgets]
    assert {chip.name for chip in overview.budgets} == {"a-gpu-hours", "b-wall-time"}
    assert percents == sorted(percents, reverse=True)
    assert all(chip.status.measured for chip in overview.budgets)
    assert reverse("budgets:detail", args=["a-gpu-hours"]) in body
    assert reverse("edit-budget", args=["b-wall-time"]) in body


@pytest.mark.parametrize("user", ["alice", "victor"])
def test_given_tenant_when_overview_opened_then_only_budgets_holding_its_work_are_listed(cluster, login, user):
    response = login(user).get(reverse("home"))
    body = response.content.decode()

    assert [chip.name for chip in response.context["overview"].budgets] == ["a-gpu-hours"]
    assert "b-wall-time" not in body
    assert reverse("edit-budget", args=["a-gpu-hours"]) not in body


def test_given_running_gpu_work_when_local_queue_opened_then_its_budget_shows_use_this_period(cluster, login):
    response = login("alice").get(reverse("local-queue", args=["team-a", "train"]))
    chip = response.context["detail"].budgets[0]

    assert chip.name == "a-gpu-hours" and chip.unit == "GPU-hours"
    assert chip.status.used_hours > 0 and 0 < chip.status.percent < 100
    assert "of 100" in response.content.decode()


def test_given_budgets_when_tree_opened_then_chips_show_percent_used(cluster, login):
    body = login("admin").get(reverse("queue-tree")).content.decode()

    assert "budget a-gpu-hours ·" in body and "budget b-wall-time ·" in body


def test_given_budget_changes_when_tenant_opens_audit_log_then_only_its_budgets_appear(cluster, login):
    admin = login("admin")
    for name in ("a-gpu-hours", "b-wall-time"):
        admin.post(
            reverse("edit-budget", args=[name]), {"allocated_hours": "500", "renewal": "monthly", "action": "Hold"}
        )
    admin.logout()

    changes = login("victor").get(reverse("audit-log")).context["audit"].rows

    assert [row.change.object_repr for row in changes] == ["a-gpu-hours"]


def test_given_budgets_app_when_sidebar_drawn_then_it_links_the_budget_pages(cluster, login):
    body = login("victor").get(reverse("home")).content.decode()

    assert f'href="{reverse("budgets:list")}"' in body
