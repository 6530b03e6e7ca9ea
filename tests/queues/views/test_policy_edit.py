"""Policy forms: the API's validation (model full_clean), errors on the named field with
nothing stored, and one audit row (surface ui) per save."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.urls import reverse

from core.models import PolicyChange
from queues.models import ClusterQueue, ClusterQueueQuota, LocalQueue, Namespace, NamespaceQuota
from queues.selectors.tree import usage_score

pytestmark = pytest.mark.django_db

LQ = ["team-a", "train"]


def quota_post(cq: ClusterQueue, rows: list[dict[str, str]], **fields: str) -> dict[str, str]:
    """A ClusterQueue form submission: its fields and the quota formset rows."""
    data = {
        "cohort": str(cq.cohort_id or ""),
        "weight": "1",
        "queueing_strategy": cq.queueing_strategy,
        "admission_mode": cq.admission_mode,
        "preemption_within_cluster_queue": "Never",
        "reclaim_within_cohort": "Never",
        "stop_policy": "None",
        "description": "",
        "quotas-TOTAL_FORMS": str(len(rows)),
        "quotas-INITIAL_FORMS": "0",
        "quotas-MIN_NUM_FORMS": "0",
        "quotas-MAX_NUM_FORMS": "1000",
    }
    data.update(fields)
    for index, row in enumerate(rows):
        for key, value in row.items():
            data[f"quotas-{index}-{key}"] = value
    return data


def test_given_admin_when_weight_saved_then_it_changes_and_one_ui_audit_row_is_written(cluster, login):
    response = login("admin").post(
        reverse("queues:edit-local-queue", args=LQ),
        {"cluster_queue": str(cluster.cq_gpu.pk), "weight": "3.5", "stop_policy": "None", "description": "main"},
    )

    assert response.status_code == 302 and response["Location"] == reverse("queues:local-queue", args=LQ)
    assert LocalQueue.objects.get(pk=cluster.a_train.pk).weight == Decimal("3.5")
    change = PolicyChange.objects.get()
    assert (change.surface, change.action, change.object_type, change.actor_name) == (
        "ui",
        "update",
        "localqueue",
        "admin",
    )
    assert (change.before["weight"], change.after["weight"]) == ("2", "3.5")
    assert change.changed_fields() == ["description", "weight"]


def test_given_saved_weight_when_redirected_then_message_names_the_change(cluster, login):
    response = login("admin").post(
        reverse("queues:edit-local-queue", args=LQ),
        {"cluster_queue": str(cluster.cq_gpu.pk), "weight": "3", "stop_policy": "None", "description": ""},
        follow=True,
    )

    assert "weight 2 → 3" in response.content.decode()


@pytest.mark.parametrize(("weight", "message"), [("-1", "weight must be 0 or more"), ("abc", "Enter a number")])
def test_given_bad_weight_when_saved_then_error_names_the_field_and_nothing_is_stored(cluster, login, weight, message):
    response = login("admin").post(
        reverse("queues:edit-local-queue", args=LQ),
        {"cluster_queue": str(cluster.cq_gpu.pk), "weight": weight, "stop_policy": "None"},
    )

    assert response.status_code == 400
    assert message in " ".join(response.context["form"].errors["weight"])
    assert 'data-field="weight"' in response.content.decode()
    assert LocalQueue.objects.get(pk=cluster.a_train.pk).weight == Decimal(2)
    assert not PolicyChange.objects.exists()


def test_given_zero_namespace_weight_when_saved_then_rejected_by_the_models_rule(cluster, login):
    response = login("admin").post(
        reverse("queues:edit-namespace", args=["team-a"]),
        {"weight": "0", "description": "", "quotas-TOTAL_FORMS": "0", "quotas-INITIAL_FORMS": "0"},
    )

    assert response.status_code == 400
    assert "greater than 0" in " ".join(response.context["form"].errors["weight"])
    assert Namespace.objects.get(pk=cluster.team_a.pk).weight == Decimal(2)


def test_given_tenant_editor_when_stop_policy_saved_then_weight_cannot_ride_along(cluster, login):
    response = login("alice").post(
        reverse("queues:edit-local-queue", args=LQ),
        {"cluster_queue": str(cluster.cq_gpu.pk), "weight": "100", "stop_policy": "Hold", "description": ""},
    )

    lq = LocalQueue.objects.get(pk=cluster.a_train.pk)
    assert response.status_code == 302
    assert (lq.stop_policy, lq.weight) == ("Hold", Decimal(2))
    assert PolicyChange.objects.get().changed_fields() == ["stop_policy"]


def test_given_tenant_viewer_or_other_tenant_when_posting_then_nothing_changes(cluster, login):
    assert login("victor").post(reverse("queues:edit-local-queue", args=LQ), {"stop_policy": "Hold"}).status_code == 403
    assert login("bob").post(reverse("queues:edit-local-queue", args=LQ), {"stop_policy": "Hold"}).status_code == 404
    assert LocalQueue.objects.get(pk=cluster.a_train.pk).stop_policy == "None"
    assert not PolicyChange.objects.exists()


def test_given_cluster_queue_quota_edit_when_saved_then_rows_are_replaced_and_audited(cluster, login):
    cq = cluster.cq_cpu
    data = quota_post(
        cq,
        [
            {
                "flavor": str(ClusterQueueQuota.objects.get(cluster_queue=cq).flavor_id),
                "resource": "cpu",
                "nominal": "48",
                "borrowing_limit": "",
                "lending_limit": "16",
                "flavor_order": "0",
            },
        ],
        weight="2",
    )

    response = login("admin").post(reverse("queues:edit-cluster-queue", args=["cq-cpu"]), data)

    assert response.status_code == 302
    row = ClusterQueueQuota.objects.get(cluster_queue=cq)
    assert (row.nominal, row.lending_limit) == (48000, 16000)
    change = PolicyChange.objects.get()
    assert change.surface == "ui" and set(change.changed_fields()) == {"quotas", "weight"}
    assert change.after["quotas"][0]["nominal"] == "48"


def test_given_bad_quantity_when_quota_saved_then_error_names_the_row_field_and_nothing_is_stored(cluster, login):
    cq = cluster.cq_cpu
    flavor = str(ClusterQueueQuota.objects.get(cluster_queue=cq).flavor_id)
    data = quota_post(cq, [{"flavor": flavor, "resource": "cpu", "nominal": "lots", "flavor_order": "0"}])

    response = login("admin").post(reverse("queues:edit-cluster-queue", args=["cq-cpu"]), data)

    assert response.status_code == 400
    assert "not a valid Kubernetes quantity" in " ".join(response.context["formset"].forms[0].errors["nominal"])
    assert 'data-field="quotas-0-nominal"' in response.content.decode()
    assert ClusterQueueQuota.objects.get(cluster_queue=cq).nominal == 32000
    assert not PolicyChange.objects.exists()


def test_given_lending_above_nominal_when_quota_saved_then_model_rule_rejects_it(cluster, login):
    cq = cluster.cq_cpu
    flavor = str(ClusterQueueQuota.objects.get(cluster_queue=cq).flavor_id)
    data = quota_post(
        cq, [{"flavor": flavor, "resource": "cpu", "nominal": "8", "lending_limit": "9", "flavor_order": "0"}]
    )

    response = login("admin").post(reverse("queues:edit-cluster-queue", args=["cq-cpu"]), data)

    assert response.status_code == 400
    assert "cannot exceed the nominal quota" in " ".join(response.context["formset"].forms[0].errors["lending_limit"])
    assert not PolicyChange.objects.exists()


def test_given_duplicate_quota_rows_when_saved_then_rejected(cluster, login):
    cq = cluster.cq_cpu
    flavor = str(ClusterQueueQuota.objects.get(cluster_queue=cq).flavor_id)
    row = {"flavor": flavor, "resource": "cpu", "nominal": "8", "flavor_order": "0"}

    response = login("admin").post(
        reverse("queues:edit-cluster-queue", args=["cq-cpu"]), quota_post(cq, [row, dict(row)])
    )

    assert response.status_code == 400
    assert ClusterQueueQuota.objects.filter(cluster_queue=cq).count() == 1


def test_given_namespace_hard_quota_when_added_then_it_is_stored_in_millis(cluster, login):
    data = {
        "weight": "2",
        "preemption_within_namespace": "Never",
        "description": "",
        "quotas-TOTAL_FORMS": "2",
        "quotas-INITIAL_FORMS": "0",
        "quotas-0-resource": "nvidia.com/gpu",
        "quotas-0-hard": "8",
        "quotas-1-resource": "memory",
        "quotas-1-hard": "64Gi",
    }

    response = login("admin").post(reverse("queues:edit-namespace", args=["team-a"]), data)

    assert response.status_code == 302
    assert dict(NamespaceQuota.objects.filter(namespace=cluster.team_a).values_list("resource", "hard")) == {
        "nvidia.com/gpu": 8000,
        "memory": 64 * 2**30 * 1000,
    }


def test_given_cohort_that_would_become_its_own_ancestor_when_saved_then_parent_error(cluster, login):
    from queues.models import Cohort

    child = Cohort.objects.create(name="child", parent=cluster.cohort)
    data = {
        "parent": str(child.pk),
        "weight": "1",
        "admission_mode": "",
        "description": "",
        "quotas-TOTAL_FORMS": "0",
        "quotas-INITIAL_FORMS": "0",
    }

    response = login("admin").post(reverse("queues:edit-cohort", args=["org"]), data)

    assert response.status_code == 400
    assert "cycle" in " ".join(response.context["form"].errors["parent"])
    assert Cohort.objects.get(pk=cluster.cohort.pk).parent_id is None


def test_given_unchanged_form_when_saved_then_no_audit_row_and_a_nothing_changed_message(cluster, login):
    response = login("admin").post(
        reverse("queues:edit-local-queue", args=LQ),
        {"cluster_queue": str(cluster.cq_gpu.pk), "weight": "2", "stop_policy": "None", "description": ""},
        follow=True,
    )

    assert "nothing changed" in response.content.decode()
    assert not PolicyChange.objects.exists()


def test_given_edit_page_when_opened_then_it_links_to_the_playground_with_the_object(cluster, login):
    from queues.ui.links import PLAYGROUND_URL_NAME, playground_url

    body = login("admin").get(reverse("queues:edit-local-queue", args=LQ)).content.decode()

    assert PLAYGROUND_URL_NAME == "playground:index"
    assert playground_url(cluster.a_train) == f"/playground/?from=localqueue%3A{cluster.a_train.pk}"
    assert 'data-hook="try-in-playground"' in body


def test_given_stored_weight_when_edit_page_opened_then_it_reads_as_typed(cluster, login):
    body = login("admin").get(reverse("queues:edit-local-queue", args=LQ)).content.decode()

    assert 'name="weight" value="2"' in body


def test_given_service_rejects_after_the_form_when_saving_then_errors_land_on_the_named_field_and_row(cluster):
    """Rules only the service sees (checked under the row lock) reach the same fields."""
    from queues.services.errors import FieldErrors
    from queues.ui.forms import ClusterQueueForm, ClusterQueueQuotaFormSet
    from queues.ui.views.policy import _attach

    cq = cluster.cq_cpu
    flavor = str(ClusterQueueQuota.objects.get(cluster_queue=cq).flavor_id)
    data = quota_post(cq, [{"flavor": flavor, "resource": "cpu", "nominal": "8", "flavor_order": "0"}])
    form, formset = ClusterQueueForm(data, instance=cq), ClusterQueueQuotaFormSet(data, instance=cq, prefix="quotas")
    assert form.is_valid() and formset.is_valid()

    _attach(
        form,
        formset,
        formset.kept_forms(),
        FieldErrors({"weight": ["too heavy"], "quotas": {"0": {"nominal": ["no"]}}}),
    )

    assert form.errors["weight"] == ["too heavy"]
    assert formset.forms[0].errors["nominal"] == ["no"]


def budget_post(**fields: str) -> dict[str, str]:
    data = {
        "allocated_hours": "100",
        "renewal": "monthly",
        "renewal_days": "",
        "action": "Hold",
        "alert_thresholds": "80, 100",
        "alert_emails": "",
        "webhook_url": "",
    }
    data.update(fields)
    return data


def test_given_admin_when_budget_allocation_raised_then_it_is_stored_and_audited_from_the_ui(cluster, login):
    from budgets.models import Budget

    response = login("admin").post(
        reverse("budgets:edit", args=["a-gpu-hours"]),
        budget_post(allocated_hours="250", alert_thresholds="50, 90%, 100"),
    )

    budget = Budget.objects.get(name="a-gpu-hours")
    assert response.status_code == 302 and response["Location"] == reverse("budgets:detail", args=["a-gpu-hours"])
    assert (budget.allocated_hours, budget.alert_thresholds) == (Decimal(250), [50, 90, 100])
    change = PolicyChange.objects.get(object_type="budget")
    assert change.surface == "ui" and set(change.changed_fields()) == {"allocated_hours", "alert_thresholds"}


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"alert_thresholds": "80, lots"}, "alert_thresholds", "is not a percentage"),
        ({"alert_thresholds": "0, 100"}, "alert_thresholds", "between 0 and 1000"),
        ({"allocated_hours": "-5"}, "allocated_hours", "must not be negative"),
        ({"renewal": "days"}, "renewal_days", "required when renewal is every N days"),
        ({"renewal": "days", "renewal_days": "2147483647"}, "renewal_days", "from 1 to 3660"),
        ({"webhook_url": "http://127.0.0.1:6379/"}, "webhook_url", "may not reach"),
        ({"webhook_url": "http://169.254.169.254/latest/meta-data/"}, "webhook_url", "may not reach"),
    ],
)
def test_given_bad_budget_input_when_saved_then_error_names_the_field_and_nothing_is_stored(
    cluster, login, fields, field, message
):
    from budgets.models import Budget

    response = login("admin").post(reverse("budgets:edit", args=["a-gpu-hours"]), budget_post(**fields))

    assert response.status_code == 400
    assert message in " ".join(response.context["form"].errors[field])
    assert Budget.objects.get(name="a-gpu-hours").allocated_hours == Decimal(100)
    assert not PolicyChange.objects.exists()


def test_given_tenants_when_budget_edit_opened_then_members_are_refused_and_others_see_nothing(cluster, login):
    assert login("alice").get(reverse("budgets:edit", args=["a-gpu-hours"])).status_code == 403
    assert login("bob").get(reverse("budgets:edit", args=["a-gpu-hours"])).status_code == 404
    assert (
        login("bob").post(reverse("budgets:edit", args=["a-gpu-hours"]), budget_post(allocated_hours="1")).status_code
        == 404
    )


def test_given_a_weight_edit_when_saved_then_the_usage_score_and_who_is_ahead_change_at_once(cluster, login):
    # Given: team-a/train has a score from the last sample (weight 2).
    before = LocalQueue.objects.get(pk=cluster.a_train.pk).weighted_share
    assert before

    # When: its weight is doubled, with no usage sample in between.
    login("admin").post(
        reverse("queues:edit-local-queue", args=LQ),
        {"cluster_queue": str(cluster.cq_gpu.pk), "weight": "4", "stop_policy": "None", "description": ""},
    )

    # Then: the stored score is halved now, and the tree shows it.
    after = LocalQueue.objects.get(pk=cluster.a_train.pk).weighted_share
    assert after == pytest.approx(before / 2)
    rows = login("admin").get(reverse("queues:queue-tree")).context["tree"].rows
    shown = next(
        row.score
        for row in rows
        if row.kind == "localQueue" and row.key.get("namespace") == "team-a" and row.key.get("name") == "train"
    )
    assert shown == usage_score(after)


def test_given_an_admins_hold_when_a_tenant_editor_resumes_it_in_the_form_then_a_field_error_and_it_stays(
    cluster, login
):
    assert (
        login("admin")
        .post(
            reverse("queues:edit-local-queue", args=LQ),
            {"cluster_queue": str(cluster.cq_gpu.pk), "weight": "2", "stop_policy": "Hold", "description": ""},
        )
        .status_code
        == 302
    )

    response = login("alice").post(
        reverse("queues:edit-local-queue", args=LQ), {"stop_policy": "None", "description": ""}
    )

    assert response.status_code == 400
    assert "only an admin may lift or change it" in " ".join(response.context["form"].errors["stop_policy"])
    queue = LocalQueue.objects.get(pk=cluster.a_train.pk)
    assert (queue.stop_policy, queue.stop_level, queue.stopped_by) == ("Hold", "admin", "admin")


def test_given_a_tenant_editors_hold_when_the_editor_resumes_it_in_the_form_then_it_is_lifted(cluster, login):
    alice = login("alice")
    alice.post(reverse("queues:edit-local-queue", args=LQ), {"stop_policy": "Hold", "description": ""})
    assert LocalQueue.objects.get(pk=cluster.a_train.pk).stop_level == "editor"

    response = alice.post(reverse("queues:edit-local-queue", args=LQ), {"stop_policy": "None", "description": ""})

    assert response.status_code == 302
    assert LocalQueue.objects.get(pk=cluster.a_train.pk).stop_policy == "None"
