"""The budget pages: tenants see only budgets of their namespaces (server-side), staff see all."""

from __future__ import annotations

import pytest
from django.contrib.staticfiles import finders
from django.urls import reverse

from budgets.models import Budget
from tests.budgets.helpers import admission_pass, at, budget, cluster, reconcile, submit
from tests.factories import TenantMembershipFactory, UserFactory
from tests.queues.loop_fixtures import make_local_queue

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_teams():
    """team-a and team-b share one ClusterQueue; each has a LocalQueue budget; the queue has one too."""
    cq, lq_a = cluster(cpu="16")
    lq_b = make_local_queue("team-b", "main", cq)
    a = budget(lq_a, name="team-a-hours", hours="3", renewal=Budget.Renewal.MONTHLY)
    b = budget(lq_b, name="team-b-hours", hours="1")  # used up by the end of the first hour
    shared = budget(cq, name="shared-hours", hours="100", cluster_queue=cq)
    for lq, name in ((lq_a, "a-train"), (lq_a, "a-eval"), (lq_b, "b-secret-project")):
        submit(lq, name)
    admission_pass(cq, at())
    for each in (a, b, shared):
        reconcile(each, at(hours=1))
    alice = UserFactory(username="alice")
    TenantMembershipFactory(user=alice, namespace=lq_a.namespace)
    return {"a": a, "b": b, "shared": shared, "alice": alice}


def page(client, name: str):
    return client.get(reverse("budgets:detail", args=[name]))


def test_given_a_tenant_then_the_list_shows_only_budgets_that_can_hold_its_work(client, two_teams):
    client.force_login(two_teams["alice"])

    response = client.get(reverse("budgets:list"))

    assert response.status_code == 200
    names = [b.name for b, _ in response.context["rows"]]
    assert names == ["shared-hours", "team-a-hours"]
    assert b"team-b-hours" not in response.content


def test_given_a_tenant_when_opening_another_teams_budget_then_it_does_not_exist_for_them(client, two_teams):
    client.force_login(two_teams["alice"])

    assert page(client, "team-b-hours").status_code == 404
    assert page(client, "no-such-budget").status_code == 404


def test_given_a_tenant_then_its_budget_page_has_chart_forecast_events_and_top_consumers(client, two_teams):
    client.force_login(two_teams["alice"])

    response = page(client, "team-a-hours")

    assert response.status_code == 200
    body = response.content.decode()
    assert '<script src="/static/js/plotly.min.js"></script>' in body
    assert 'id="burn-down-data"' in body
    chart = response.context["chart"]
    assert [trace["name"] for trace in chart["data"]] == ["remaining", "forecast"]
    assert [c.label for c in response.context["consumers"]] == ["a-train", "a-eval"]  # a tie: submission order
    status = response.context["status"]
    assert (status.used_hours, status.forecast_exhausted_at) == (2, at(hours=1, minutes=30))
    assert list(response.context["events"]) == []  # 67%: the 80% threshold is not reached yet
    assert 'id="hold"' not in body


def test_given_an_exhausted_budget_then_its_page_shows_the_hold_and_the_exhaustion(
    client, two_teams, django_user_model
):
    client.force_login(django_user_model.objects.create_user("root", is_staff=True))

    response = page(client, "team-b-hours")

    body = response.content.decode()
    assert 'id="hold"' in body and "budget team-b-hours exhausted: 1 of 1 hours used this period" in body
    assert response.context["status"].exhausted_at == at(hours=1)
    assert {"Exhausted", "HoldPlaced"} <= {e.kind for e in response.context["events"]}


def test_given_a_shared_cluster_queue_budget_then_a_tenant_sees_other_namespaces_only_as_a_total(client, two_teams):
    client.force_login(two_teams["alice"])

    response = page(client, "shared-hours")

    labels = [c.label for c in response.context["consumers"]]
    assert labels == ["a-train", "a-eval", "other namespaces"]
    assert b"b-secret-project" not in response.content


def test_given_staff_then_every_budget_and_every_consumer_is_visible(client, two_teams, django_user_model):
    staff = django_user_model.objects.create_user("root", password="pw", is_staff=True)
    client.force_login(staff)

    assert page(client, "team-b-hours").status_code == 200
    response = page(client, "shared-hours")
    assert "b-secret-project" in [c.label for c in response.context["consumers"]]
    assert len(client.get(reverse("budgets:list")).context["rows"]) == 3


def test_given_an_anonymous_visitor_then_budget_pages_ask_to_sign_in(client, two_teams):
    response = page(client, "team-a-hours")

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_given_a_budget_never_measured_then_the_page_says_so_without_a_chart(client, django_user_model):
    _, lq = cluster()
    budget(lq, name="fresh", hours="5")
    client.force_login(django_user_model.objects.create_user("root", is_staff=True))

    response = page(client, "fresh")

    assert response.status_code == 200
    assert response.context["chart"] is None
    assert b"No usage measured yet" in response.content


def test_plotly_is_served_from_static_files_not_the_internet():
    path = finders.find("js/plotly.min.js")
    assert path is not None
    with open(path, "rb") as handle:
        assert b"plotly.js" in handle.read(200)
