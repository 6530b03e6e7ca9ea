"""AdmittedUsage: admitted usage per LocalQueue, ClusterQueue and resource, kept as counters."""

from __future__ import annotations

from django.db import models


class AdmittedUsage(models.Model):
    """What the admitted workloads of one LocalQueue hold of one resource in one ClusterQueue.

    A counter, not a fact of its own: the sum of ``WorkloadResource.amount`` over the workloads
    in state Admitted with this ``local_queue``, ``cluster_queue`` (the workload's, set at
    admission) and ``resource``; ``workloads`` counts them (a row at 0 holds nothing). The
    transitions that admit, evict, finish, fail or cancel keep it exact in the same transaction
    as the state change (``queues.services.usage_counters``), so a usage sample reads these
    rows instead of joining every admitted workload's resource rows. ``manage.py
    check_usage_counters`` recomputes them from the rows and compares (``--repair`` rewrites).
    Rows are never deleted by a transition (a counter back at 0 stays, to be reused).
    """

    local_queue = models.ForeignKey("queues.LocalQueue", on_delete=models.CASCADE, related_name="+", db_index=False)
    cluster_queue = models.ForeignKey(
        "queues.ClusterQueue", on_delete=models.CASCADE, related_name="+", null=True, blank=True, db_index=False
    )
    resource = models.CharField(max_length=253)
    amount = models.BigIntegerField(default=0, help_text="Millis of the resource held by admitted workloads")
    workloads = models.IntegerField(default=0, help_text="Admitted workloads that request the resource")

    class Meta:
        ordering = ["local_queue_id", "cluster_queue_id", "resource"]
        constraints = [
            models.UniqueConstraint(fields=["local_queue", "cluster_queue", "resource"], name="admitted_usage_key"),
        ]

    def __str__(self) -> str:
        return f"{self.local_queue_id}/{self.cluster_queue_id}:{self.resource}={self.amount}"
