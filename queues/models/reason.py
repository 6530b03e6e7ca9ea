"""Why a pending workload waits, kept apart from the wide workload row.

The admission pass explains every waiting workload, and an admission changes the figures in
many of those sentences. Stored on the workload row (pod sets, times, a dozen columns and four
indexes), every changed sentence meant rewriting a wide row; here a reason is a narrow row of
its own, written only when its meaning changes:

- the first ``ADMISSION_EXPLAINED_PER_QUEUE`` waiting workloads of a ClusterQueue (and any held,
  stopped or StrictFIFO-blocked one) carry their own sentence (``message``);
- the others that wait for quota are explained by reference to their queue's head
  (``fairshare.admission.reasons.waiting_behind``): their row holds only the code and the
  ClusterQueue (``behind``), and the sentence, which changes as the head's does, is the one the
  last pass stored on that queue's ``PendingOrder`` row (``by_reference``), rendered on read.

A row is read only while its workload is pending (``Workload.pending_reason_code`` and
``pending_reason_message`` are empty otherwise): admissions leave the row behind, an eviction
overwrites it with the eviction's reason, and it goes with its workload.
"""

from __future__ import annotations

from django.db import models


class WorkloadReason(models.Model):
    """The stored reason of one workload (see the module): a code and a sentence, or a reference."""

    workload = models.OneToOneField(
        "queues.Workload", primary_key=True, on_delete=models.CASCADE, related_name="reason"
    )
    code = models.CharField(max_length=40, blank=True, help_text="Machine-readable, e.g. InsufficientQuota")
    message = models.TextField(blank=True, help_text="The sentence; empty when explained by reference (behind)")
    behind = models.ForeignKey(
        "queues.PendingOrder",
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,  # the queue's order row is upserted every pass; a dangling reference reads as ""
        related_name="+",
        help_text="Explained by reference to the head of this ClusterQueue's order",
    )

    class Meta:
        ordering = ["workload_id"]

    def __str__(self) -> str:
        return f"{self.workload_id}: {self.code}"

    @property
    def text(self) -> str:
        """The sentence as the pass wrote it: its own, or its queue's shared one (one query
        unless loaded with ``select_related("reason__behind")``)."""
        if self.behind_id is None:
            return self.message
        try:
            return self.behind.by_reference if self.behind is not None else ""
        except models.ObjectDoesNotExist:
            return ""
