"""WorkloadCount: admitted and pending workloads per LocalQueue, kept as counters."""

from __future__ import annotations

from django.db import models


class WorkloadCount(models.Model):
    """How many workloads of one LocalQueue were Admitted and how many Pending when the counts
    were last folded; the changes since are in ``WorkloadCountChange``.

    A counter, not a fact of its own: this row plus the sum of the LocalQueue's change rows is
    the count of its workloads in each state. Every path that creates a workload or changes its
    state (submission, admit, evict, finish, fail, cancel) appends a change row in the same
    transaction as the change (``queues.services.usage_counters``), and the usage sample folds
    the change rows into these rows, so it reads about one row per LocalQueue instead of
    counting the workload table. ``manage.py check_usage_counters`` recounts from the rows and
    compares (``--repair`` rewrites). A LocalQueue without rows has none of either.
    """

    local_queue = models.OneToOneField(
        "queues.LocalQueue", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    admitted = models.IntegerField(default=0, help_text="Workloads of the LocalQueue in state Admitted")
    pending = models.IntegerField(default=0, help_text="Workloads of the LocalQueue in state Pending")

    class Meta:
        ordering = ["local_queue_id"]

    def __str__(self) -> str:
        return f"{self.local_queue_id}: {self.admitted} admitted, {self.pending} pending"


class WorkloadCountChange(models.Model):
    """A change of one LocalQueue's admitted and pending counts, not folded into its
    ``WorkloadCount`` yet: appended, never updated, so two transactions never wait on each
    other's change rows (a submission never waits for an admission pass of the same queue)."""

    local_queue = models.ForeignKey("queues.LocalQueue", on_delete=models.CASCADE, related_name="+", db_index=False)
    admitted = models.IntegerField(default=0)
    pending = models.IntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.local_queue_id}: {self.admitted:+} admitted, {self.pending:+} pending"
