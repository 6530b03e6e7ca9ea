"""Keeps deletions safe and holds consistent whatever deletes a budget (API, admin, cascade)."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, pre_delete
from django.dispatch import receiver

from budgets.accounting import lock_budget
from budgets.models import Budget


@receiver(pre_delete, sender=Budget, dispatch_uid="budgets.lock_budget_before_delete")
def lock_budget_before_delete(sender: type[Budget], instance: Budget, **kwargs: Any) -> None:
    """Any deletion (a cascade from the target included) waits for a running accounting cycle of
    the budget before it deletes a row: Django sends pre_delete before deleting anything."""
    lock_budget(instance.pk)


@receiver(post_delete, sender=Budget, dispatch_uid="budgets.remove_hold_of_deleted_budget")
def remove_hold_of_deleted_budget(sender: type[Budget], instance: Budget, **kwargs: Any) -> None:
    from budgets.services import remove_hold_of_deleted_budget as remove

    remove(instance.pk, instance.name)
