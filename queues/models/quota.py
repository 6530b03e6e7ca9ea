"""Per-flavor, per-resource quota rows owned by a ClusterQueue or a Cohort."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from core.formatting import format_for_humans
from core.validators import validate_resource_name
from queues.fields import QuantityField


class FlavorResourceQuota(models.Model):
    """Nominal quota with optional borrowing and lending limits (Kueue's ``resourceGroups``)."""

    flavor = models.ForeignKey("queues.ResourceFlavor", on_delete=models.PROTECT, related_name="+")
    resource = models.CharField(max_length=253, validators=[validate_resource_name])
    nominal = QuantityField(help_text="Guaranteed amount, e.g. 16, 500m, 64Gi")
    borrowing_limit = QuantityField(null=True, blank=True, help_text="Most it may borrow; empty = unlimited")
    lending_limit = QuantityField(null=True, blank=True, help_text="Most it lends out; empty = all unused")

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.flavor_id}/{self.resource}={format_for_humans(self.nominal, self.resource)}"

    def clean(self) -> None:
        super().clean()
        errors: dict[str, str] = {}
        for field in ("nominal", "borrowing_limit", "lending_limit"):
            value = getattr(self, field)
            if value is not None and value < 0:
                errors[field] = f"must not be negative, got {format_for_humans(value, self.resource)}"
        if (
            "lending_limit" not in errors
            and self.lending_limit is not None
            and self.nominal is not None
            and self.lending_limit > self.nominal
        ):
            errors["lending_limit"] = (
                f"cannot exceed the nominal quota ({format_for_humans(self.nominal, self.resource)})"
            )
        if errors:
            raise ValidationError(errors)


def quota_constraints(owner: str) -> list[models.BaseConstraint]:
    prefix = f"{owner}_quota"
    return [
        models.UniqueConstraint(fields=[owner, "flavor", "resource"], name=f"{prefix}_unique_resource"),
        models.CheckConstraint(condition=models.Q(nominal__gte=0), name=f"{prefix}_nominal_gte_0"),
        models.CheckConstraint(
            condition=models.Q(borrowing_limit__isnull=True) | models.Q(borrowing_limit__gte=0),
            name=f"{prefix}_borrowing_gte_0",
        ),
        models.CheckConstraint(
            condition=models.Q(lending_limit__isnull=True)
            | (models.Q(lending_limit__gte=0) & models.Q(lending_limit__lte=models.F("nominal"))),
            name=f"{prefix}_lending_in_range",
        ),
    ]


class ClusterQueueQuota(FlavorResourceQuota):
    cluster_queue = models.ForeignKey("queues.ClusterQueue", on_delete=models.CASCADE, related_name="quotas")
    flavor_order = models.PositiveSmallIntegerField(
        default=0, help_text="The flavor's rank in this ClusterQueue (lower is tried first)"
    )

    class Meta:
        ordering = ["cluster_queue_id", "flavor_order", "flavor_id", "resource"]
        constraints = quota_constraints("cluster_queue")


class CohortQuota(FlavorResourceQuota):
    cohort = models.ForeignKey("queues.Cohort", on_delete=models.CASCADE, related_name="quotas")

    class Meta:
        ordering = ["cohort_id", "flavor_id", "resource"]
        constraints = quota_constraints("cohort")
