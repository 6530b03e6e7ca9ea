"""The usage time series: one row per queue per sample, for charts and TimeAware windows."""

from django.db import models


class UsageSample(models.Model):
    """What one queue, namespace or cohort held at one sample, and its decayed usage after it.

    ``allocated`` and ``capacity`` are integer millis per resource; ``consumed`` the decayed
    average (floats). Rows older than the raw retention are folded into hourly averages.
    """

    class Kind(models.TextChoices):
        LOCAL_QUEUE = "localQueue", "LocalQueue"
        NAMESPACE = "namespace", "Namespace"
        CLUSTER_QUEUE = "clusterQueue", "ClusterQueue"
        COHORT = "cohort", "Cohort"

    class Resolution(models.TextChoices):
        RAW = "raw", "Every sample"
        HOURLY = "hourly", "Hourly average"

    sampled_at = models.DateTimeField()
    kind = models.CharField(max_length=16, choices=Kind.choices)
    object_id = models.BigIntegerField()
    allocated = models.JSONField(default=dict)
    consumed = models.JSONField(default=dict)
    capacity = models.JSONField(default=dict, blank=True, help_text="Nominal quota of a ClusterQueue or cohort subtree")
    weighted_share = models.FloatField(null=True, blank=True)
    admitted_count = models.PositiveIntegerField(default=0)
    pending_count = models.PositiveIntegerField(default=0)
    resolution = models.CharField(max_length=8, choices=Resolution.choices, default=Resolution.RAW)

    class Meta:
        ordering = ["sampled_at", "id"]
        indexes = [
            models.Index(fields=["kind", "object_id", "sampled_at"], name="usage_sample_series"),
            models.Index(fields=["resolution", "sampled_at"], name="usage_sample_retention"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}:{self.object_id}@{self.sampled_at:%Y-%m-%d %H:%M}"
