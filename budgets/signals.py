"""Keeps holds consistent with budgets whatever deletes a budget (API, admin, cascade)."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete
from django.dispatch import receiver

from budgets.models import Budget


@receiver(post_delete, sender=Budget, dispatch_uid="budgets.remove_hold_of_deleted_budget")
def remove_hold_of_deleted_budget(sender: type[Budget], instance: Budget, **kwargs: Any) -> None:
    from budgets.services import remove_hold_of_deleted_budget as remove

    remove(instance.pk, instance.name)
