"""Holds put on a queue from outside its spec (budgets, operators): the planner honours them."""

from functools import reduce
from operator import or_
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

# What a hold or a budget is attached to: exactly one of these (nullable foreign keys).
QUEUE_TARGETS = ("local_queue", "namespace", "cluster_queue")
_TARGET_MODELS = {
    "local_queue": "queues.LocalQueue",
    "namespace": "queues.Namespace",
    "cluster_queue": "queues.ClusterQueue",
}


def target_field(target: str, *, related_name: str) -> models.ForeignKey:
    """One of the ``QUEUE_TARGETS`` foreign keys (optional: the others may be the one set)."""
    return models.ForeignKey(
        _TARGET_MODELS[target], null=True, blank=True, on_delete=models.CASCADE, related_name=related_name
    )


def exactly_one_target(name: str) -> models.CheckConstraint:
    """The database's side of the rule: exactly one of the ``QUEUE_TARGETS`` is set."""
    one_of = (models.Q(**{f"{field}__isnull": field != chosen for field in QUEUE_TARGETS}) for chosen in QUEUE_TARGETS)
    return models.CheckConstraint(condition=reduce(or_, one_of), name=name)


def targets_set(instance: Any) -> list[str]:
    """The ``QUEUE_TARGETS`` an instance has set (``clean`` wants exactly one)."""
    return [field for field in QUEUE_TARGETS if getattr(instance, f"{field}_id")]


class QueueHold(models.Model):
    """No new admissions for the target while the hold exists; ``drain`` also evicts what runs.

    Budgets create and remove these (source ``budget:<id>``); the admission pass reads them
    into the engine snapshot as ``Hold``.
    """

    local_queue = target_field("local_queue", related_name="holds")
    namespace = target_field("namespace", related_name="holds")
    cluster_queue = target_field("cluster_queue", related_name="holds")
    code = models.CharField(max_length=40, default="BudgetExhausted")
    message = models.CharField(max_length=300)
    drain = models.BooleanField(default=False)
    source = models.CharField(max_length=80, help_text="Who holds it, e.g. budget:12")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            exactly_one_target("queue_hold_exactly_one_target"),
            models.UniqueConstraint(fields=["source"], name="queue_hold_unique_source"),
        ]

    def __str__(self) -> str:
        return f"{self.code} on {self.local_queue or self.namespace or self.cluster_queue}"

    def clean(self) -> None:
        super().clean()
        if len(targets_set(self)) != 1:
            raise ValidationError({"local_queue": "choose exactly one target"})
