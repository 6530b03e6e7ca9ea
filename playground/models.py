"""The playground's records: scenarios, runs (baseline vs edited, or one scenario alone for the
simulations API), simulation outcomes, and the applications of a run's edits to the real policy.

Ids are UUIDs so a run's URL can be shared without enumerating others'; access is still checked
(owner or admin). The database holds every input and output: a lost Celery message or a worker
restart loses no run (a queued run can be sent again by id).
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from core.access import owned, visibility


class Scenario(models.Model):
    """A scenario document (docs/design.md "Scenario files") and where it came from."""

    class Source(models.TextChoices):
        LIVE = "live", "Today's cluster"
        PRESET = "preset", "Preset"
        UPLOAD = "upload", "Uploaded file"
        API = "api", "Posted to /api/v1/simulations/"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    source = models.CharField(max_length=10, choices=Source.choices)
    preset = models.CharField(max_length=60, blank=True, help_text="Preset slug when loaded from one")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="playground_scenarios")
    document = models.JSONField(help_text="The scenario as validated by the engine's loader")
    workload_count = models.PositiveIntegerField(default=0)
    live_as_of = models.DateTimeField(null=True, blank=True, help_text="Live exports: the moment exported")
    live_options = models.JSONField(default=dict, blank=True, help_text="Live exports: days of history and the rest")
    redacted = models.BooleanField(default=False, help_text="Live export of a tenant: other namespaces renamed")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "created_at"], name="playground_scenario_owner")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(source__in=["live", "preset", "upload", "api"]), name="playground_scenario_source"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Outcome(models.Model):
    """What the simulator returned for a scenario with a list of edits (the baseline has none).

    The engine is deterministic, so one outcome serves every run of the same scenario and
    edits (unique on the pair): trying three edits of one scenario simulates the baseline once.
    """

    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="outcomes")
    edits_key = models.CharField(max_length=64, help_text="sha256 of the edits as JSON")
    edits = models.JSONField(default=list)
    data = models.JSONField(help_text="The simulator's JSON (docs/design.md contract)")
    seconds = models.FloatField(help_text="Engine time of the simulation")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [models.UniqueConstraint(fields=["scenario", "edits_key"], name="playground_outcome_unique")]

    def __str__(self) -> str:
        return f"{self.scenario_id} {len(self.edits)} edits"


class Run(models.Model):
    """Baseline against edited: queued, run by a worker (with progress), compared.

    A run with no edits is a single simulation of its scenario (``/api/v1/simulations/``): its
    outcome is the baseline and there is no comparison.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    class Phase(models.TextChoices):
        WAITING = "", "Waiting for a worker"
        BASELINE = "baseline", "Simulating the baseline"
        EDITED = "edited", "Simulating the edited scenario"
        COMPARING = "comparing", "Comparing"
        DONE = "done", "Done"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="runs")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="playground_runs")
    title = models.CharField(max_length=200, blank=True)
    edits = models.JSONField(default=list, help_text='--set edits: ["localQueues.team-a/main.weight=3"]')
    deltas = models.JSONField(default=list, help_text="What the edits change, object by object (policy_diff)")
    environment = models.JSONField(
        default=list, blank=True, help_text="VARIABLE=value lines for the fair-sharing knobs the edits change"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    phase = models.CharField(max_length=10, choices=Phase.choices, default=Phase.WAITING, blank=True)
    progress = models.FloatField(default=0.0, help_text="0..1 over both simulations and the comparison")
    error = models.TextField(blank=True)
    baseline = models.ForeignKey(Outcome, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    edited = models.ForeignKey(Outcome, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    comparison = models.JSONField(null=True, blank=True, help_text="playground.compare.compare(): what the page draws")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "created_at"], name="playground_run_owner")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=["queued", "running", "succeeded", "failed"]),
                name="playground_run_status",
            ),
            models.CheckConstraint(
                condition=models.Q(progress__gte=0) & models.Q(progress__lte=1), name="playground_run_progress_range"
            ),
        ]

    def __str__(self) -> str:
        return self.title or f"run of {self.scenario_id}"

    @property
    def is_done(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED)


class Application(models.Model):
    """A run's edits made real policy: who, when, what, and the audit rows it wrote."""

    run = models.ForeignKey(Run, on_delete=models.PROTECT, related_name="applications")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_name = models.CharField(max_length=150, blank=True)
    applied_at = models.DateTimeField(auto_now_add=True)
    deltas = models.JSONField(default=list, help_text="The database changes written")
    environment = models.JSONField(default=list, blank=True, help_text="VARIABLE=value lines still to set by hand")
    policy_changes = models.ManyToManyField("core.PolicyChange", related_name="playground_applications", blank=True)

    class Meta:
        ordering = ["-applied_at", "-id"]

    def __str__(self) -> str:
        return f"{self.run_id} applied by {self.actor_name or 'system'}"


# Admins see every scenario and run; everyone else their own (``core.access``).
visibility(Scenario, rule=owned)
visibility(Run, rule=owned)
