"""One row per admission of a workload: the intervals wall time and budgets are derived from."""

from datetime import datetime

from django.db import models


class AdmissionRecord(models.Model):
    """An admission interval ``[admitted_at, ended_at)``; open while the workload runs.

    Wall time, resource-hours and budget charges are all computed from these intervals, so an
    eviction and re-admission, a period boundary or a late task never loses or doubles time.
    """

    class EndReason(models.TextChoices):
        FINISHED = "Finished", "Finished"
        FAILED = "Failed", "Failed"
        CANCELLED = "Cancelled", "Cancelled"
        EVICTED = "Evicted", "Evicted"

    workload = models.ForeignKey("queues.Workload", on_delete=models.CASCADE, related_name="admissions")
    namespace = models.ForeignKey("queues.Namespace", on_delete=models.CASCADE, related_name="+")
    local_queue = models.ForeignKey("queues.LocalQueue", on_delete=models.CASCADE, related_name="+")
    cluster_queue = models.ForeignKey("queues.ClusterQueue", on_delete=models.CASCADE, related_name="+")
    assignment = models.JSONField(default=dict, help_text="{resource: flavor}")
    requests = models.JSONField(default=dict, help_text="{resource: millis} at admission")
    admitted_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=12, choices=EndReason.choices, blank=True)
    end_message = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["admitted_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ended_at__isnull=True) | models.Q(ended_at__gte=models.F("admitted_at")),
                name="admission_record_ends_after_start",
            ),
            models.UniqueConstraint(
                fields=["workload"], condition=models.Q(ended_at__isnull=True), name="admission_record_one_open"
            ),
        ]
        indexes = [
            models.Index(fields=["local_queue", "admitted_at"], name="admission_record_lq"),
            models.Index(fields=["ended_at"], name="admission_record_ended"),
        ]

    def __str__(self) -> str:
        return f"{self.workload_id} {self.admitted_at:%Y-%m-%d %H:%M}-{self.ended_at or ''}"

    def seconds(self, now: datetime | None = None) -> int:
        """Length of the interval in whole seconds (up to ``now`` while open)."""
        end = self.ended_at or now
        if end is None:
            return 0
        return max(0, int((end - self.admitted_at).total_seconds()))
