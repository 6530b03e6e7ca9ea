"""Budget validation: one target, kind-specific fields, thresholds."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from budgets.models import Budget
from tests.factories import LocalQueueFactory, NamespaceFactory

pytestmark = pytest.mark.django_db


def errors_of(budget: Budget) -> dict:
    with pytest.raises(ValidationError) as error:
        budget.full_clean()
    return error.value.message_dict


def test_given_two_targets_then_rejected():
    lq = LocalQueueFactory()
    budget = Budget(name="b", local_queue=lq, namespace=lq.namespace, allocated_hours=Decimal(10))
    assert "exactly one target" in errors_of(budget)["local_queue"][0]


def test_given_no_target_bypassing_clean_then_database_refuses():
    with pytest.raises(IntegrityError), transaction.atomic():
        Budget.objects.create(name="b", allocated_hours=Decimal(10))


def test_given_resource_hours_without_resource_then_rejected_on_resource():
    budget = Budget(name="b", namespace=NamespaceFactory(), kind=Budget.Kind.RESOURCE_HOURS, allocated_hours=Decimal(5))
    assert "resource" in errors_of(budget)


def test_given_negative_allocation_then_rejected():
    budget = Budget(name="b", namespace=NamespaceFactory(), allocated_hours=Decimal(-1))
    assert "allocated_hours" in errors_of(budget)


@pytest.mark.parametrize("thresholds", [[0], [80, "x"], "80", [2000]])
def test_given_bad_thresholds_then_rejected(thresholds):
    budget = Budget(name="b", namespace=NamespaceFactory(), allocated_hours=Decimal(5), alert_thresholds=thresholds)
    assert "alert_thresholds" in errors_of(budget)


def test_given_every_n_days_without_n_then_rejected():
    budget = Budget(name="b", namespace=NamespaceFactory(), allocated_hours=Decimal(5), renewal=Budget.Renewal.DAYS)
    assert "renewal_days" in errors_of(budget)


def test_given_valid_gpu_hours_budget_then_accepted():
    budget = Budget(
        name="gpu-hours",
        local_queue=LocalQueueFactory(),
        kind=Budget.Kind.RESOURCE_HOURS,
        resource="nvidia.com/gpu",
        allocated_hours=Decimal(100),
    )
    budget.full_clean()
    assert budget.target_label.startswith("LocalQueue ")
