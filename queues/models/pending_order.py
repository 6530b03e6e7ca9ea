"""Queue positions of pending workloads, kept compactly: one row per ClusterQueue per pass.

An admission shifts the position of every workload behind it, so positions stored on the
workload rows would mean rewriting every pending row on every pass. The pass instead writes
each ClusterQueue's order once, as a list of workload ids (``PendingOrder``), and readers see
one row per workload through the ``PendingPosition`` view over those lists, joined like any
relation (``Workload.objects.with_queue_position()``). The same row carries the sentence the
queue's later waiting workloads share (``by_reference``, see ``queues.models.reason``): it
changes with every pass, they do not.
"""

from __future__ import annotations

from django.db import models


class PendingOrder(models.Model):
    """The pending workloads of one ClusterQueue in queue order, as the last pass ranked them."""

    cluster_queue = models.OneToOneField(
        "queues.ClusterQueue", primary_key=True, on_delete=models.CASCADE, related_name="pending_order"
    )
    workload_ids = models.JSONField(default=list, help_text="Workload ids, first in line first")
    planned_at = models.DateTimeField(help_text="When the pass that wrote this order planned")
    by_reference = models.TextField(
        blank=True,
        default="",
        help_text="The reason of the waiting workloads explained by reference to the queue's head",
    )
    by_reference_shortages = models.JSONField(
        default=list,
        blank=True,
        help_text="The short resources that reason names (the head's), as WorkloadReason.shortages",
    )

    class Meta:
        ordering = ["cluster_queue_id"]

    def __str__(self) -> str:
        return f"{self.cluster_queue_id}: {len(self.workload_ids)} pending"


class PendingPosition(models.Model):
    """A database view: one row per workload in a ``PendingOrder`` list, with its 1-based position.

    Read-only (``managed = False``; the migration creates the view for PostgreSQL and SQLite).
    """

    workload = models.OneToOneField(
        "queues.Workload",
        primary_key=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="pending_position",
    )
    cluster_queue = models.ForeignKey(
        "queues.ClusterQueue", on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    position = models.PositiveIntegerField()

    class Meta:
        managed = False
        db_table = "queues_pendingposition"

    def __str__(self) -> str:
        return f"{self.workload_id} at {self.position}"
