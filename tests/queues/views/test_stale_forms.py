"""Edit pages carry the version they were opened at: a save over someone else's newer save is
refused (409) with the user's input kept, an error naming who changed what and when, and
nothing written; saving that page again replaces the other change deliberately."""

from __future__ import annotations

import html
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from budgets.models import Budget
from core.access import access_for
from core.models import PolicyChange
from core.versions import version_of
from queues.models import ClusterQueue, Cohort, LocalQueue, Namespace

pytestmark = pytest.mark.django_db

CQ_EDIT = reverse("queues:edit-cluster-queue", args=["cq-cpu"])
BUDGET_EDIT = reverse("budgets:edit", args=["a-gpu-hours"])


def signed_in(username: str, *, staff: bool = False) -> Client:
    user = get_user_model().objects.get_or_create(username=username, defaults={"is_staff": staff})[0]
    client = Client()
    client.force_login(user)
    return client


def form_data(page: Any) -> dict[str, Any]:
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


@pytest.mark.parametrize(
    ("url", "model", "lookup"),
    [
        (
            reverse("queues:edit-local-queue", args=["team-a", "train"]),
            LocalQueue,
            {"namespace__name": "team-a", "name": "train"},
        ),
        (reverse("queues:edit-namespace", args=["team-a"]), Namespace, {"name": "team-a"}),
        (CQ_EDIT, ClusterQueue, {"name": "cq-cpu"}),
        (reverse("queues:edit-cohort", args=["org"]), Cohort, {"name": "org"}),
        (BUDGET_EDIT, Budget, {"name": "a-gpu-hours"}),
    ],
    ids=["local-queue", "namespace", "cluster-queue", "cohort", "budget"],
)
def test_given_an_edit_page_then_its_form_carries_the_current_version_in_a_hidden_input(
    cluster, login, url, model, lookup
):
    body = login("admin").get(url).content.decode()

    version = version_of(model.objects.get(**lookup), access_for(get_user_model().objects.get(username="admin")))
    assert f'<input type="hidden" name="version" value="{version}"' in body
    assert '<label for="id_version">' not in body


def test_given_a_cluster_queue_saved_by_another_admin_when_the_stale_form_is_saved_then_409_and_nothing_is_written(
    cluster,
):
    mine, theirs = signed_in("admin-a", staff=True), signed_in("admin-b", staff=True)
    opened = mine.get(CQ_EDIT)
    their_page = theirs.get(CQ_EDIT)
    assert theirs.post(CQ_EDIT, {**form_data(their_page), "weight": "4"}).status_code == 302

    response = mine.post(CQ_EDIT, {**form_data(opened), "weight": "1.5", "description": "my note"})

    body = html.unescape(response.content.decode())
    queue = ClusterQueue.objects.get(name="cq-cpu")
    assert response.status_code == 409
    assert "This cluster queue was changed after you opened this page." in body
    assert "admin-b changed weight at " in body and "(Web UI)" in body
    assert "Nothing was saved" in body
    assert 'name="weight" value="1.5"' in body and 'value="my note"' in body  # the input is kept
    assert (queue.weight, queue.description) == (Decimal(4), "")
    assert PolicyChange.objects.filter(object_type="clusterqueue").count() == 1


def test_given_the_stale_page_shown_when_saved_again_then_it_replaces_the_other_change(cluster):
    mine, theirs = signed_in("admin-a", staff=True), signed_in("admin-b", staff=True)
    opened = mine.get(CQ_EDIT)
    their_page = theirs.get(CQ_EDIT)
    theirs.post(CQ_EDIT, {**form_data(their_page), "weight": "4"})
    current = version_of(
        ClusterQueue.objects.get(name="cq-cpu"), access_for(get_user_model().objects.get(username="admin-a"))
    )
    stale = mine.post(CQ_EDIT, {**form_data(opened), "weight": "1.5", "description": "my note"})

    again = mine.post(CQ_EDIT, form_data(stale))

    queue = ClusterQueue.objects.get(name="cq-cpu")
    assert stale.context["form"]["version"].value() == current  # the page shown carries the version it was refused for
    assert again.status_code == 302
    assert (queue.weight, queue.description) == (Decimal("1.5"), "my note")
    assert list(queue.quotas.values_list("resource", "nominal")) == [("cpu", 32_000)]


def test_given_a_quota_row_changed_by_another_admin_when_the_stale_form_is_saved_then_409_naming_quotas(cluster):
    mine, theirs = signed_in("admin-a", staff=True), signed_in("admin-b", staff=True)
    opened = mine.get(CQ_EDIT)
    their_page = theirs.get(CQ_EDIT)
    assert theirs.post(CQ_EDIT, {**form_data(their_page), "quotas-0-nominal": "64"}).status_code == 302

    response = mine.post(CQ_EDIT, {**form_data(opened), "weight": "3"})

    assert response.status_code == 409
    assert "admin-b changed quotas at " in html.unescape(response.content.decode())
    assert ClusterQueue.objects.get(name="cq-cpu").weight == Decimal(1)


def test_given_a_budget_changed_by_another_admin_when_the_stale_form_is_saved_then_409_and_nothing_is_written(
    cluster, monkeypatch
):
    from budgets import services

    monkeypatch.setattr(services, "request_reconcile", lambda budget_id: None)
    mine, theirs = signed_in("admin-a", staff=True), signed_in("admin-b", staff=True)
    opened = mine.get(BUDGET_EDIT)
    their_page = theirs.get(BUDGET_EDIT)
    assert theirs.post(BUDGET_EDIT, {**form_data(their_page), "allocated_hours": "150"}).status_code == 302

    response = mine.post(BUDGET_EDIT, {**form_data(opened), "alert_thresholds": "50, 100"})

    body = html.unescape(response.content.decode())
    budget = Budget.objects.get(name="a-gpu-hours")
    assert response.status_code == 409
    assert "This budget was changed after you opened this page." in body
    assert "admin-b changed allocated hours at " in body
    assert 'value="50, 100"' in body
    assert (budget.allocated_hours, budget.alert_thresholds) == (Decimal(150), [80, 100])
    assert PolicyChange.objects.filter(object_type="budget").count() == 1

    again = mine.post(BUDGET_EDIT, form_data(response))

    assert again.status_code == 302
    assert Budget.objects.get(name="a-gpu-hours").alert_thresholds == [50, 100]


def test_given_a_tenant_editor_with_a_stale_local_queue_form_then_409_naming_the_admin(cluster, login):
    url = reverse("queues:edit-local-queue", args=["team-a", "train"])
    alice = login("alice")
    opened = alice.get(url)
    admin = signed_in("admin-b", staff=True)
    admin_page = admin.get(url)
    assert admin.post(url, {**form_data(admin_page), "stop_policy": "Hold"}).status_code == 302

    response = alice.post(url, {**form_data(opened), "description": "paused for the demo"})

    body = html.unescape(response.content.decode())
    assert response.status_code == 409
    assert "admin-b changed stop policy at " in body
    assert LocalQueue.objects.get(pk=cluster.a_train.pk).description != "paused for the demo"


def test_given_a_form_posted_without_a_version_then_it_saves_as_before(cluster):
    """A script that posts the fields without reading the page first is not refused."""
    mine = signed_in("admin-a", staff=True)
    data = form_data(mine.get(CQ_EDIT))
    del data["version"]

    response = mine.post(CQ_EDIT, {**data, "weight": "2"})

    assert response.status_code == 302
    assert ClusterQueue.objects.get(name="cq-cpu").weight == Decimal(2)
