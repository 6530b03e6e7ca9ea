"""What-if runs of the engine's simulator that were too large to answer within one request."""

import uuid

from django.conf import settings
from django.db import models


class SimulationRun(models.Model):
    """A scenario queued for the Celery worker, and its result once run.

    The database, not the broker, holds the scenario and the result: a lost message or a
    restarted worker loses no run (a queued run can be sent again by id).
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    scenario_name = models.CharField(max_length=200, blank=True)
    document = models.JSONField(help_text="The scenario as posted, with the --set edits applied")
    result = models.JSONField(null=True, blank=True, help_text="The simulator's JSON (DESIGN.md contract)")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "created_at"], name="simulation_run_owner")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=["queued", "running", "succeeded", "failed"]),
                name="simulation_run_status_valid",
            )
        ]

    def __str__(self) -> str:
        return f"{self.scenario_name or 'scenario'} ({self.status})"
