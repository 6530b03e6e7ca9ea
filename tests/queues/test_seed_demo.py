"""`manage.py seed_demo` loads a realistic cluster and can run again without duplicating."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from budgets.models import Budget
from queues.models import ClusterQueue, LocalQueue, Namespace, PolicyChange, ResourceFlavor, Workload, WorkloadState

pytestmark = pytest.mark.django_db


def counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (ResourceFlavor, ClusterQueue, Namespace, LocalQueue, Workload, Budget, get_user_model())
    }


def test_given_empty_database_when_seeded_then_a_realistic_cluster_exists():
    out = StringIO()
    call_command("seed_demo", stdout=out)
    assert {"a100", "h100", "default"} <= set(ResourceFlavor.objects.values_list("name", flat=True))
    assert Namespace.objects.count() >= 6
    assert len(set(Namespace.objects.values_list("weight", flat=True))) > 1
    assert ClusterQueue.objects.filter(cohort__isnull=False).count() >= 3
    assert Budget.objects.count() >= 3
    assert Workload.objects.count() >= 200
    assert Workload.objects.filter(state=WorkloadState.PENDING).count() >= 100
    assert Workload.objects.filter(state=WorkloadState.FINISHED).count() >= 100
    assert get_user_model().objects.filter(is_staff=True).exists()
    assert get_user_model().objects.filter(is_staff=False, memberships__isnull=False).exists()
    assert "admin / admin" in out.getvalue()


def test_given_seeded_database_when_seeded_again_then_nothing_is_duplicated():
    call_command("seed_demo", stdout=StringIO())
    first = counts()
    call_command("seed_demo", stdout=StringIO())
    assert counts() == first


def test_given_if_empty_and_existing_cluster_then_demo_is_not_loaded():
    ClusterQueue.objects.create(name="mine")
    out = StringIO()
    call_command("seed_demo", "--if-empty", stdout=out)
    assert Workload.objects.count() == 0
    assert "not loaded" in out.getvalue()


def test_given_seed_then_workload_resources_match_pod_sets():
    call_command("seed_demo", stdout=StringIO())
    for workload in Workload.objects.prefetch_related("resources")[:50]:
        assert {row.resource: row.amount for row in workload.resources.all()} == workload.requests


def test_given_seed_then_no_audit_noise_is_written():
    call_command("seed_demo", stdout=StringIO())
    assert PolicyChange.objects.count() == 0
