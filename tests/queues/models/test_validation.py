"""Each model rule rejects bad input with an error on the named field; constraints back them."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from fairshare.quantities import parse_millis
from queues import services
from queues.models import ClusterQueue, ClusterQueueQuota, Cohort, LocalQueue, Namespace, Workload
from tests.factories import (
    ClusterQueueFactory,
    CohortFactory,
    LocalQueueFactory,
    NamespaceFactory,
    NamespaceQuotaFactory,
    ResourceFlavorFactory,
)

pytestmark = pytest.mark.django_db


def field_errors(callable_) -> dict:
    with pytest.raises(ValidationError) as error:
        callable_()
    return error.value.message_dict


# -- cohorts ---------------------------------------------------------------------------------


def test_given_cohort_chain_when_root_gets_leaf_as_parent_then_cycle_rejected_on_parent():
    root = CohortFactory(name="root")
    middle = CohortFactory(name="middle", parent=root)
    leaf = CohortFactory(name="leaf", parent=middle)
    root.parent = leaf
    errors = field_errors(root.full_clean)
    assert errors["parent"] == ["would create a cycle: root -> leaf -> middle -> root"]


def test_given_cohort_when_made_its_own_parent_then_rejected():
    cohort = CohortFactory(name="solo")
    cohort.parent = cohort
    assert "parent" in field_errors(cohort.full_clean)


def test_given_cohort_own_parent_when_saved_bypassing_clean_then_database_refuses():
    cohort = CohortFactory(name="solo")
    with pytest.raises(IntegrityError), transaction.atomic():
        Cohort.objects.filter(pk=cohort.pk).update(parent=cohort.pk)


def test_given_valid_cohort_tree_then_clean_passes():
    root = CohortFactory(name="root")
    child = Cohort(name="child", parent=root)
    child.full_clean()


# -- weights ---------------------------------------------------------------------------------


@pytest.mark.parametrize("factory", [CohortFactory, ClusterQueueFactory])
def test_given_negative_weight_then_rejected_on_weight(factory):
    obj = factory.build(weight=Decimal("-1"))
    assert "weight" in field_errors(obj.full_clean)


def test_given_zero_weight_on_local_queue_then_allowed():
    lq = LocalQueueFactory(weight=Decimal(0))
    lq.full_clean()


@pytest.mark.parametrize("weight", ["0", "-2"])
def test_given_non_positive_namespace_weight_then_rejected(weight):
    ns = Namespace(name="team-x", weight=Decimal(weight))
    errors = field_errors(ns.full_clean)
    assert errors["weight"] == [f"weight must be greater than 0, got {Decimal(weight)}"]


def test_given_negative_weight_bypassing_clean_then_database_refuses():
    cq = ClusterQueueFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        type(cq).objects.filter(pk=cq.pk).update(weight=Decimal("-1"))


# -- names -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Team_A", "-team", "team-", "a" * 64, ""])
def test_given_invalid_kubernetes_name_then_rejected_on_name(name):
    assert "name" in field_errors(Namespace(name=name).full_clean)


def test_given_duplicate_cluster_queue_name_then_rejected_on_name():
    ClusterQueueFactory(name="gpu")
    errors = field_errors(ClusterQueue(name="gpu").full_clean)
    assert "name" in errors


def test_given_duplicate_local_queue_in_namespace_then_rejected():
    lq = LocalQueueFactory(name="main")
    duplicate = LocalQueue(namespace=lq.namespace, name="main", cluster_queue=lq.cluster_queue)
    with pytest.raises(ValidationError, match="already exists"):
        duplicate.full_clean()


# -- quotas ----------------------------------------------------------------------------------


def test_given_negative_nominal_quota_then_rejected_on_nominal():
    quota = ClusterQueueQuota(
        cluster_queue=ClusterQueueFactory(), flavor=ResourceFlavorFactory(), resource="cpu", nominal=-1000
    )
    errors = field_errors(quota.full_clean)
    assert errors["nominal"] == ["must not be negative, got -1"]


def test_given_lending_limit_above_nominal_then_rejected_on_lending_limit():
    quota = ClusterQueueQuota(
        cluster_queue=ClusterQueueFactory(),
        flavor=ResourceFlavorFactory(),
        resource="cpu",
        nominal=parse_millis("4"),
        lending_limit=parse_millis("8"),
    )
    assert field_errors(quota.full_clean)["lending_limit"] == ["cannot exceed the nominal quota (4)"]


def test_given_negative_borrowing_limit_bypassing_clean_then_database_refuses():
    cq = ClusterQueueFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        ClusterQueueQuota.objects.create(
            cluster_queue=cq, flavor=ResourceFlavorFactory(), resource="cpu", nominal=1000, borrowing_limit=-1
        )


def test_given_invalid_resource_name_in_quota_then_rejected_on_resource():
    quota = ClusterQueueQuota(
        cluster_queue=ClusterQueueFactory(), flavor=ResourceFlavorFactory(), resource="bad name", nominal=0
    )
    assert "resource" in field_errors(quota.full_clean)


def test_given_same_flavor_and_resource_twice_then_rejected():
    cq = ClusterQueueFactory()
    flavor = ResourceFlavorFactory()
    ClusterQueueQuota.objects.create(cluster_queue=cq, flavor=flavor, resource="cpu", nominal=1000)
    with pytest.raises(IntegrityError), transaction.atomic():
        ClusterQueueQuota.objects.create(cluster_queue=cq, flavor=flavor, resource="cpu", nominal=2000)


def test_given_negative_namespace_quota_then_rejected_on_hard():
    quota = NamespaceQuotaFactory.build(namespace=NamespaceFactory(), hard=-5)
    assert "hard" in field_errors(quota.full_clean)


# -- local queues ----------------------------------------------------------------------------


def test_given_local_queue_with_workloads_when_cluster_queue_changes_then_rejected():
    lq = LocalQueueFactory()
    services.submit_workload(local_queue=lq, name="job-1", pod_sets=[{"count": 1, "requests": {"cpu": "1"}}])
    lq.cluster_queue = ClusterQueueFactory()
    errors = field_errors(lq.full_clean)
    assert "cannot change while the LocalQueue holds workloads" in errors["cluster_queue"][0]


def test_given_empty_local_queue_when_cluster_queue_changes_then_allowed():
    lq = LocalQueueFactory()
    lq.cluster_queue = ClusterQueueFactory()
    lq.full_clean()
    lq.save()


# -- workloads -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod_sets", "fragment"),
    [
        ([], "non-empty list"),
        ([{"count": 0, "requests": {"cpu": "1"}}], "pod_sets[0].count"),
        ([{"count": 1, "requests": {"cpu": "-1"}}], "pod_sets[0].requests.cpu: must not be negative"),
        ([{"count": 1, "requests": {"cpu": "lots"}}], "pod_sets[0].requests.cpu: 'lots' is not a valid"),
        ([{"count": 1, "requests": {"bad name": "1"}}], "not a valid resource name"),
        ([{"count": 1, "requests": {}}], "pod_sets[0].requests"),
    ],
)
def test_given_bad_pod_sets_when_submitted_then_rejected_naming_the_field(pod_sets, fragment):
    lq = LocalQueueFactory()
    with pytest.raises(ValidationError) as error:
        services.submit_workload(local_queue=lq, name="job", pod_sets=pod_sets)
    assert fragment in error.value.message_dict["pod_sets"][0]
    assert not Workload.objects.exists()


def test_given_good_workload_when_submitted_then_requests_are_millis_and_rows_exist():
    lq = LocalQueueFactory()
    workload = services.submit_workload(
        local_queue=lq, name="train", pod_sets=[{"count": 2, "requests": {"cpu": "500m", "memory": "1Gi"}}]
    )
    assert workload.requests == {"cpu": 1000, "memory": 2 * 1073741824000}
    assert dict(workload.resources.values_list("resource", "amount")) == workload.requests


def test_given_workload_name_taken_in_namespace_then_rejected():
    lq = LocalQueueFactory()
    services.submit_workload(local_queue=lq, name="job", pod_sets=[{"count": 1, "requests": {"cpu": "1"}}])
    with pytest.raises(ValidationError, match="already exists"):
        services.submit_workload(local_queue=lq, name="job", pod_sets=[{"count": 1, "requests": {"cpu": "1"}}])


def test_given_workload_whose_local_queue_is_in_another_namespace_then_rejected():
    lq = LocalQueueFactory()
    workload = Workload(
        namespace=NamespaceFactory(), local_queue=lq, name="job", pod_sets=[{"count": 1, "requests": {"cpu": "1"}}]
    )
    assert "local_queue" in field_errors(workload.full_clean)


def test_given_submitted_workload_when_pod_sets_edited_then_rejected():
    lq = LocalQueueFactory()
    workload = services.submit_workload(local_queue=lq, name="job", pod_sets=[{"count": 1, "requests": {"cpu": "1"}}])
    workload.pod_sets = [{"count": 5, "requests": {"cpu": "1"}}]
    assert "cannot change after submission" in field_errors(workload.full_clean)["pod_sets"][0]
