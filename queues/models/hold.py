"""Holds put on a queue from outside its spec (budgets, operators): the planner honours them."""

from django.core.exceptions import ValidationError
from django.db import models


class QueueHold(models.Model):
    """No new admissions for the target while the hold exists; ``drain`` also evicts what runs.

    Budgets create and remove these (source ``budget:<id>``); the admission pass reads them
    into the engine snapshot as ``Hold``.
    """

    local_queue = models.ForeignKey(
        "queues.LocalQueue", null=True, blank=True, on_delete=models.CASCADE, related_name="holds"
    )
    namespace = models.ForeignKey("queues.Namespace", null=True, blank=True, on_delete=models.CASCADE, related_name="holds")
    cluster_queue = models.ForeignKey(
        "queues.ClusterQueue", null=True, blank=True, on_delete=models.CASCADE, related_name="holds"
    )
    code = models.CharField(max_length=40, default="BudgetExhausted")
    message = models.CharField(max_length=300)
    drain = models.BooleanField(default=False)
    source = models.CharField(max_length=80, help_text="Who holds it, e.g. budget:12")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    models.Q(local_queue__isnull=False, namespace__isnull=True, cluster_queue__isnull=True)
                    | models.Q(local_queue__isnull=True, namespace__isnull=False, cluster_queue__isnull=True)
                    | models.Q(local_queue__isnull=True, namespace__isnull=True, cluster_queue__isnull=False)
                ),
                name="queue_hold_exactly_one_target",
            ),
            models.UniqueConstraint(fields=["source"], name="queue_hold_unique_source"),
        ]

    def __str__(self) -> str:
        return f"{self.code} on {self.local_queue or self.namespace or self.cluster_queue}"

    def clean(self) -> None:
        super().clean()
        if sum(bool(x) for x in (self.local_queue_id, self.namespace_id, self.cluster_queue_id)) != 1:
            raise ValidationError({"local_queue": "choose exactly one target"})
