"""The audit log: every change for admins, their own objects' changes for tenants."""

from __future__ import annotations

import pytest
from django.urls import reverse

from core.audit import policy_state, record_change
from core.models import PolicyChange

pytestmark = pytest.mark.django_db


@pytest.fixture
def changes(cluster):
    """One audited change on each of team-a's LocalQueue, team-b's LocalQueue and a ClusterQueue."""
    for obj, surface in ((cluster.a_train, "ui"), (cluster.b_train, "api"), (cluster.cq_gpu, "admin")):
        before = policy_state(obj)
        obj.description = "changed"
        obj.save()
        record_change(instance=obj, action="update", before=before, after=policy_state(obj), surface=surface)
    return cluster


def logged(response) -> list[str]:
    return [row.change.object_repr for row in response.context["audit"].rows]


def test_given_changes_when_admin_opens_log_then_all_are_listed_newest_first_with_diffs(changes, login):
    response = login("admin").get(reverse("queues:audit-log"))
    body = response.content.decode()

    assert logged(response) == ["cq-gpu", "team-b/train", "team-a/train"]
    assert "<del>—</del> → <ins>changed</ins>" in body
    assert reverse("queues:local-queue", args=["team-a", "train"]) in body


def test_given_changes_when_tenant_opens_log_then_only_its_objects_are_listed(changes, login):
    response = login("victor").get(reverse("queues:audit-log"))

    assert logged(response) == ["team-a/train"]
    assert "team-b" not in response.content.decode()


def test_given_filters_when_log_opened_then_they_narrow_it(changes, login):
    client = login("admin")

    assert logged(client.get(reverse("queues:audit-log"), {"surface": "api"})) == ["team-b/train"]
    assert logged(client.get(reverse("queues:audit-log"), {"object_type": "clusterqueue"})) == ["cq-gpu"]
    assert PolicyChange.objects.count() == 3


def test_given_a_budget_change_when_a_tenant_opens_the_log_then_where_alerts_go_is_not_shown(cluster, login):
    from budgets.models import Budget
    from budgets.services import update_budget

    update_budget(
        Budget.objects.get(name="a-gpu-hours"),
        allocated_hours=150,
        webhook_url="https://93.184.215.14/secret-token",
        alert_emails="ops@example.org",
    )

    tenant = login("victor").get(reverse("queues:audit-log")).content.decode()
    admin = login("admin").get(reverse("queues:audit-log")).content.decode()

    assert "a-gpu-hours" in tenant and "allocated_hours" in tenant
    assert "secret-token" not in tenant and "ops@example.org" not in tenant and "webhook_url" not in tenant
    assert "secret-token" in admin and "ops@example.org" in admin
