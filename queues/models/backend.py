"""What the control loop knows about the cluster behind it: job links and the backend's health."""

from __future__ import annotations

from django.db import models

from queues.models.cluster import Cluster, default_cluster_id


class ClusterJob(models.Model):
    """A job of a real cluster (a Slurm job id) linked to the workload it became.

    Imported once: the unique ``(cluster, external_id)`` means a resync after a restart finds
    the link instead of importing the job again. ``workload`` is empty when the job could not
    be imported (``error`` says why), so a bad job is reported once, not at every sync.
    ``settled`` is set when both sides are over (the workload ended and so did the job); only
    unsettled links are looked at by the sync.
    """

    backend = models.CharField(max_length=20)
    cluster = models.ForeignKey(
        "queues.Cluster", on_delete=models.PROTECT, related_name="jobs", default=default_cluster_id
    )
    external_id = models.CharField(max_length=64, help_text="The cluster's job id")
    workload = models.OneToOneField(
        "queues.Workload", null=True, blank=True, on_delete=models.CASCADE, related_name="cluster_job"
    )
    error = models.CharField(max_length=300, blank=True)
    settled = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "external_id"], name="cluster_job_unique_external_id"),
        ]
        indexes = [models.Index(fields=["cluster", "settled"], name="cluster_job_cluster_settled")]

    def __str__(self) -> str:
        return f"{self.cluster_id}:{self.external_id}"


class BackendHealth(models.Model):
    """Whether a cluster answered the last call; while it does not, its syncs back off and the
    admission passes hold admissions to its flavors (one row per cluster)."""

    cluster = models.OneToOneField("queues.Cluster", on_delete=models.CASCADE, related_name="health")
    backend = models.CharField(max_length=20, help_text="The cluster's backend when the row was last written")
    reachable = models.BooleanField(default=True)
    failures = models.PositiveIntegerField(default=0, help_text="Consecutive failed calls")
    unreachable_since = models.DateTimeField(null=True, blank=True)
    retry_at = models.DateTimeField(null=True, blank=True, help_text="No call before this while unreachable")
    last_error = models.CharField(max_length=300, blank=True)
    last_ok_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "backend health"

    def __str__(self) -> str:
        return f"{self.cluster_id} ({self.backend}): {'reachable' if self.reachable else 'unreachable'}"


def health_of(cluster: Cluster) -> BackendHealth | None:
    """``cluster``'s health row, or None before its first sync (no query after
    ``select_related("health")``)."""
    try:
        return cluster.health
    except BackendHealth.DoesNotExist:
        return None
