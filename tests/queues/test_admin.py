"""Django admin: every model's pages load for staff, and policy saves are audited."""

from decimal import Decimal

import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import timezone

from budgets.models import Budget, BudgetEvent
from core.api_tokens import issue_token
from core.audit import record_change
from core.models import DirectoryIdentity, PolicyChange
from core.webhooks_services import create_endpoint
from queues.models import BackendHealth, ClusterJob, ClusterQueue, LocalQueue, Workload, default_cluster

pytestmark = pytest.mark.django_db

MODELS = list(admin.site._registry)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m._meta.label)
def test_given_demo_when_staff_opens_changelist_then_it_loads(admin_client, demo, model):
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    response = admin_client.get(url)
    assert response.status_code == 200


@pytest.fixture
def every_model_has_a_row(demo, admin_user, settings):
    """The demo holds no groups, tokens, sign-in records, directory identities, webhook endpoints or audit rows, and
    budget events only when the current period (which depends on today's date) has seen enough use: make one of each
    (the audited change below is queued to the endpoint: a delivery)."""
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    create_endpoint(name="admin-page-check", url="http://127.0.0.1:9/hook", events=["policy.changed"])
    Group.objects.create(name="operators")
    issue_token(admin_user)
    seen = {"username": "team-admin", "ip_address": "127.0.0.1", "user_agent": "test", "path_info": "/accounts/login/"}
    AccessAttempt.objects.create(**seen, get_data="", post_data="", failures_since_start=1)
    AccessFailureLog.objects.create(**seen)
    AccessLog.objects.create(**seen)
    lq = LocalQueue.objects.first()
    record_change(instance=lq, action="update", before={"weight": "1"}, after={"weight": "2"}, actor=admin_user)
    budget = Budget.objects.first()
    BudgetEvent.objects.create(
        budget=budget,
        kind=BudgetEvent.Kind.HOLD_LIFTED,
        at=timezone.now(),
        period_start=budget.anchor,
        used_hours=Decimal(0),
        allocated_hours=budget.allocated_hours,
        message="admin page check",
    )
    ClusterJob.objects.create(backend="slurm", external_id="1", workload=Workload.objects.first())
    BackendHealth.objects.create(
        cluster=default_cluster(), backend="slurm", reachable=False, last_error="admin page check"
    )
    DirectoryIdentity.objects.create(user=admin_user, source="ldap", groups=["cn=admins"], synced_at=timezone.now())


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m._meta.label)
def test_given_demo_when_staff_opens_a_change_page_then_it_loads(admin_client, every_model_has_a_row, model):
    obj = model.objects.first()
    assert obj is not None
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_change", args=[obj.pk])
    assert admin_client.get(url).status_code == 200


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m._meta.label)
def test_given_search_when_staff_searches_then_it_loads(admin_client, demo, model):
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    assert admin_client.get(url, {"q": "team"}).status_code == 200


def test_given_anonymous_user_then_admin_redirects_to_login(client):
    response = client.get(reverse("admin:queues_clusterqueue_changelist"))
    assert response.status_code == 302


def test_given_staff_when_weight_changed_in_admin_then_audit_row_records_before_and_after(admin_client, demo):
    lq = LocalQueue.objects.select_related("namespace", "cluster_queue").get(
        namespace__name="team-vision", name="training"
    )
    url = reverse("admin:queues_localqueue_change", args=[lq.pk])
    response = admin_client.post(
        url,
        {
            "namespace": lq.namespace_id,
            "name": lq.name,
            "cluster_queue": lq.cluster_queue_id,
            "weight": "5",
            "stop_policy": "None",
            "description": "",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    change = PolicyChange.objects.get()
    assert change.surface == "admin"
    assert change.actor_name == "admin"
    assert change.before["weight"] == "2"
    assert change.after["weight"] == "5"
    assert change.changed_fields() == ["weight"]


def test_given_staff_when_quota_edited_inline_then_audit_row_shows_quota_in_kubernetes_notation(admin_client, demo):
    cq = ClusterQueue.objects.get(name="cpu-interactive")
    quotas = list(cq.quotas.order_by("id"))
    url = reverse("admin:queues_clusterqueue_change", args=[cq.pk])
    data = {
        "name": cq.name,
        "cohort": cq.cohort_id,
        "weight": "1",
        "queueing_strategy": cq.queueing_strategy,
        "admission_mode": cq.admission_mode,
        "preemption_within_cluster_queue": "Never",
        "reclaim_within_cohort": "Never",
        "stop_policy": "None",
        "description": "",
        "quotas-TOTAL_FORMS": str(len(quotas)),
        "quotas-INITIAL_FORMS": str(len(quotas)),
        "quotas-MIN_NUM_FORMS": "0",
        "quotas-MAX_NUM_FORMS": "1000",
    }
    for index, quota in enumerate(quotas):
        nominal = "96" if quota.resource == "cpu" else "256Gi"
        data.update(
            {
                f"quotas-{index}-id": quota.pk,
                f"quotas-{index}-cluster_queue": cq.pk,
                f"quotas-{index}-flavor_order": quota.flavor_order,
                f"quotas-{index}-flavor": quota.flavor_id,
                f"quotas-{index}-resource": quota.resource,
                f"quotas-{index}-nominal": nominal,
                f"quotas-{index}-borrowing_limit": "0",
                f"quotas-{index}-lending_limit": "",
            }
        )
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    change = PolicyChange.objects.get(object_type="clusterqueue")
    before = {q["resource"]: q["nominal"] for q in change.before["quotas"]}
    after = {q["resource"]: q["nominal"] for q in change.after["quotas"]}
    assert before == {"cpu": "64", "memory": "256Gi"}
    assert after == {"cpu": "96", "memory": "256Gi"}


def test_given_staff_when_quota_is_negative_in_admin_then_form_error_and_nothing_changes(admin_client, demo):
    cq = ClusterQueue.objects.get(name="cpu-interactive")
    quota = cq.quotas.get(resource="cpu")
    url = reverse("admin:queues_clusterqueue_change", args=[cq.pk])
    data = {
        "name": cq.name,
        "cohort": cq.cohort_id,
        "weight": "1",
        "queueing_strategy": cq.queueing_strategy,
        "admission_mode": "",
        "preemption_within_cluster_queue": "Never",
        "reclaim_within_cohort": "Never",
        "stop_policy": "None",
        "description": "",
        "quotas-TOTAL_FORMS": "1",
        "quotas-INITIAL_FORMS": "1",
        "quotas-MIN_NUM_FORMS": "0",
        "quotas-MAX_NUM_FORMS": "1000",
        "quotas-0-id": quota.pk,
        "quotas-0-cluster_queue": cq.pk,
        "quotas-0-flavor_order": 0,
        "quotas-0-flavor": quota.flavor_id,
        "quotas-0-resource": "cpu",
        "quotas-0-nominal": "-4",
        "quotas-0-borrowing_limit": "",
        "quotas-0-lending_limit": "",
    }
    response = admin_client.post(url, data)
    assert response.status_code == 200
    assert "must not be negative" in response.content.decode()
    quota.refresh_from_db()
    assert quota.nominal == 64000
    assert not PolicyChange.objects.exists()


def test_given_staff_when_a_local_queue_is_stopped_in_admin_then_the_stop_is_an_admins(admin_client, demo):
    lq = LocalQueue.objects.select_related("namespace").get(namespace__name="team-vision", name="training")
    data = {
        "namespace": lq.namespace_id,
        "name": lq.name,
        "cluster_queue": lq.cluster_queue_id,
        "weight": "2",
        "stop_policy": "Hold",
        "description": "",
    }

    response = admin_client.post(reverse("admin:queues_localqueue_change", args=[lq.pk]), data)

    assert response.status_code == 302, response.content.decode()[:2000]
    lq.refresh_from_db()
    assert (lq.stop_policy, lq.stop_level, lq.stopped_by) == ("Hold", "admin", "admin")


def test_given_quota_fields_in_admin_then_they_are_text_inputs_showing_kubernetes_notation(admin_client, demo):
    cq = ClusterQueue.objects.get(name="cpu-interactive")

    body = admin_client.get(reverse("admin:queues_clusterqueue_change", args=[cq.pk])).content.decode()

    assert 'type="number" name="quotas-0-nominal"' not in body
    assert 'name="quotas-1-nominal" value="256Gi"' in body or 'name="quotas-0-nominal" value="256Gi"' in body
