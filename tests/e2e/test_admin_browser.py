"""The Django admin in a real Chromium: quota fields take Kubernetes notation, so a ClusterQueue with
1Ti of memory loads as typed and saves untouched (a number input used to empty "1Ti" and "512Gi")."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from fairshare.quantities import parse_millis
from queues.models import (
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    Namespace,
    NamespaceQuota,
    ResourceFlavor,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "pw-for-tests"


@pytest.fixture
def staff(transactional_db, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return get_user_model().objects.create_user("ops", password=PASSWORD, is_staff=True, is_superuser=True)


def sign_in(page) -> None:
    page.goto(reverse("admin:login"))
    page.fill("#id_username", "ops")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url("**/admin/")


def quotas(owner) -> list[tuple]:
    fields = ("resource", "nominal", "borrowing_limit", "lending_limit", "hard")
    return sorted(tuple(getattr(row, name, None) for name in fields) for row in owner.quotas.all())


def test_given_a_cluster_queue_with_binary_quantities_when_saved_untouched_then_nothing_changes(staff, page):
    flavor = ResourceFlavor.objects.create(name="default")
    cohort = Cohort.objects.create(name="org")
    cq = ClusterQueue.objects.create(name="big-memory", cohort=cohort)
    for resource, nominal, borrowing, lending in (("memory", "1Ti", "256Gi", "512Gi"), ("cpu", "500m", None, "250m")):
        ClusterQueueQuota.objects.create(
            cluster_queue=cq,
            flavor=flavor,
            resource=resource,
            nominal=parse_millis(nominal),
            borrowing_limit=borrowing and parse_millis(borrowing),
            lending_limit=lending and parse_millis(lending),
        )
    stored = quotas(cq)
    sign_in(page)

    page.goto(reverse("admin:queues_clusterqueue_change", args=[cq.pk]))
    shown = [page.input_value(f"#id_quotas-{i}-{name}") for i in range(2) for name in ("nominal", "lending_limit")]
    page.click("input[name=_save]")
    page.wait_for_url("**/admin/queues/clusterqueue/")

    assert sorted(shown) == sorted(["1Ti", "512Gi", "500m", "250m"])
    assert page.locator(".messagelist .success").count() == 1
    assert quotas(ClusterQueue.objects.get(pk=cq.pk)) == stored


@pytest.mark.parametrize("model", ["cohort", "namespace"])
def test_given_cohort_and_namespace_quotas_in_notation_when_saved_untouched_then_kept(staff, page, model):
    flavor = ResourceFlavor.objects.create(name="default")
    if model == "cohort":
        owner = Cohort.objects.create(name="org")
        CohortQuota.objects.create(
            cohort=owner,
            flavor=flavor,
            resource="memory",
            nominal=parse_millis("2Ti"),
            lending_limit=parse_millis("1Ti"),
        )
    else:
        owner = Namespace.objects.create(name="team-a")
        NamespaceQuota.objects.create(namespace=owner, resource="memory", hard=parse_millis("768Gi"))
    stored = quotas(owner)
    sign_in(page)

    page.goto(reverse(f"admin:queues_{model}_change", args=[owner.pk]))
    page.click("input[name=_save]")
    page.wait_for_url(f"**/admin/queues/{model}/")

    assert quotas(type(owner).objects.get(pk=owner.pk)) == stored
