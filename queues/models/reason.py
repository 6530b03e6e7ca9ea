"""Why a pending workload waits, kept apart from the wide workload row.

The admission pass explains every waiting workload, and an admission changes the figures in
many of those sentences. Stored on the workload row (pod sets, times, a dozen columns and four
indexes), every changed sentence meant rewriting a wide row; here a reason is a narrow row of
its own, written only when its meaning changes:

- the first ``ADMISSION_EXPLAINED_PER_QUEUE`` waiting workloads of a ClusterQueue (and any held,
  stopped or StrictFIFO-blocked one) carry their own sentence (``message``), and the short
  resources it names (``shortages``, dominant first);
- the others that wait for quota are explained by reference to their queue's head
  (``fairshare.admission.reasons.waiting_behind``): their row holds only the code and the
  ClusterQueue (``behind``), and the sentence, which changes as the head's does, is the one the
  last pass stored on that queue's ``PendingOrder`` row (``by_reference``, with the head's
  shortages in ``by_reference_shortages``), rendered on read.

A row is read only while its workload is pending (``Workload.pending_reason_code`` and
``pending_reason_message`` are empty otherwise): admissions leave the row behind, an eviction
overwrites it with the eviction's reason, and it goes with its workload.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import models

from fairshare.types import Shortage


def shortage_rows(shortages: Iterable[Shortage]) -> list[dict[str, Any]]:
    """The engine's shortages as stored (JSON): ``{resource, flavor, requested, available,
    ceiling}``, amounts in millis, ``flavor`` null when no flavor has quota for the resource,
    in the engine's order (dominant first)."""
    return [
        {
            "resource": s.resource,
            "flavor": s.flavor,
            "requested": s.requested,
            "available": s.available,
            "ceiling": s.ceiling,
        }
        for s in shortages
    ]


class WorkloadReason(models.Model):
    """The stored reason of one workload (see the module): a code and a sentence, or a reference."""

    workload = models.OneToOneField(
        "queues.Workload", primary_key=True, on_delete=models.CASCADE, related_name="reason"
    )
    code = models.CharField(max_length=40, blank=True, help_text="Machine-readable, e.g. InsufficientQuota")
    message = models.TextField(blank=True, help_text="The sentence; empty when explained by reference (behind)")
    shortages = models.JSONField(
        default=list,
        blank=True,
        help_text="The short resources its own sentence names, dominant first: "
        "[{resource, flavor, requested, available, ceiling}] in millis (see shortage_rows)",
    )
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
    def shortage_rows(self) -> list[dict[str, Any]]:
        """The short resources its sentence names, dominant first: its own, or its queue's
        head's when explained by reference (as ``text``)."""
        if self.behind_id is None:
            return list(self.shortages or [])
        try:
            return list(self.behind.by_reference_shortages or []) if self.behind is not None else []
        except models.ObjectDoesNotExist:
            return []

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
