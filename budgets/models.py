"""Time budgets: wall-time hours or resource-hours per LocalQueue, Namespace or ClusterQueue."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from queues.models.validators import validate_dns_label, validate_resource_name


def default_thresholds() -> list[int]:
    return [80, 100]


class Budget(models.Model):
    class Kind(models.TextChoices):
        WALL_TIME = "WallTime", "Wall-time hours"
        RESOURCE_HOURS = "ResourceHours", "Resource-hours"

    class Action(models.TextChoices):
        HOLD = "Hold", "Hold"
        HOLD_AND_DRAIN = "HoldAndDrain", "HoldAndDrain"

    class Renewal(models.TextChoices):
        NONE = "none", "Never"
        WEEKLY = "weekly", "Weekly"
        MONTHLY = "monthly", "Monthly"
        DAYS = "days", "Every N days"

    name = models.CharField(max_length=63, unique=True, validators=[validate_dns_label])
    local_queue = models.ForeignKey(
        "queues.LocalQueue", null=True, blank=True, on_delete=models.CASCADE, related_name="budgets"
    )
    namespace = models.ForeignKey(
        "queues.Namespace", null=True, blank=True, on_delete=models.CASCADE, related_name="budgets"
    )
    cluster_queue = models.ForeignKey(
        "queues.ClusterQueue", null=True, blank=True, on_delete=models.CASCADE, related_name="budgets"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.WALL_TIME)
    resource = models.CharField(
        max_length=253, blank=True, validators=[validate_resource_name], help_text="ResourceHours only, e.g. nvidia.com/gpu"
    )
    flavor = models.ForeignKey(
        "queues.ResourceFlavor", null=True, blank=True, on_delete=models.PROTECT, help_text="ResourceHours only; empty = any"
    )
    allocated_hours = models.DecimalField(
        max_digits=14, decimal_places=3, help_text="Hours of wall time, or resource-hours in base units (GPU-hours)"
    )
    renewal = models.CharField(max_length=10, choices=Renewal.choices, default=Renewal.NONE)
    renewal_days = models.PositiveIntegerField(null=True, blank=True, help_text="Period length when renewal is 'days'")
    anchor = models.DateTimeField(default=timezone.now, help_text="Start of the first period")
    action = models.CharField(max_length=20, choices=Action.choices, default=Action.HOLD)
    alert_thresholds = models.JSONField(default=default_thresholds, blank=True, help_text="Percentages, e.g. [80, 100]")
    safe_admission = models.BooleanField(
        default=False, help_text="Admit a workload with a maximum runtime only if its projected charge fits"
    )
    alert_emails = models.CharField(max_length=500, blank=True, help_text="Comma-separated addresses")
    webhook_url = models.URLField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    models.Q(local_queue__isnull=False, namespace__isnull=True, cluster_queue__isnull=True)
                    | models.Q(local_queue__isnull=True, namespace__isnull=False, cluster_queue__isnull=True)
                    | models.Q(local_queue__isnull=True, namespace__isnull=True, cluster_queue__isnull=False)
                ),
                name="budget_exactly_one_target",
            ),
            models.CheckConstraint(condition=models.Q(allocated_hours__gte=0), name="budget_allocated_gte_0"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def target(self) -> Any:
        return self.local_queue or self.namespace or self.cluster_queue

    @property
    def target_label(self) -> str:
        if self.local_queue_id:
            return f"LocalQueue {self.local_queue.key}"
        if self.namespace_id:
            return f"Namespace {self.namespace.name}"
        if self.cluster_queue_id:
            return f"ClusterQueue {self.cluster_queue.name}"
        return "no target"

    def clean(self) -> None:
        super().clean()
        errors: dict[str, str] = {}
        targets = [f for f in ("local_queue", "namespace", "cluster_queue") if getattr(self, f"{f}_id")]
        if len(targets) != 1:
            errors["local_queue"] = "choose exactly one target: a LocalQueue, a Namespace or a ClusterQueue"
        if self.allocated_hours is not None and self.allocated_hours < Decimal(0):
            errors["allocated_hours"] = "must not be negative"
        if self.kind == self.Kind.RESOURCE_HOURS and not self.resource:
            errors["resource"] = "required for a ResourceHours budget (e.g. nvidia.com/gpu)"
        if self.kind == self.Kind.WALL_TIME and (self.resource or self.flavor_id):
            errors["resource"] = "a WallTime budget counts hours, not a resource; leave resource and flavor empty"
        if self.renewal == self.Renewal.DAYS and not self.renewal_days:
            errors["renewal_days"] = "required when renewal is every N days"
        thresholds = self.alert_thresholds
        if not isinstance(thresholds, list) or any(
            isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t <= 1000 for t in thresholds
        ):
            errors["alert_thresholds"] = "expected a list of percentages between 0 and 1000, e.g. [80, 100]"
        if errors:
            raise ValidationError(errors)
