"""WorkloadPriorityClass: a named priority value, as in Kueue's ``kueue.x-k8s.io`` API.

Workloads carry a plain integer priority; the classes exist so that Kueue manifests can be
imported and exported without loss, and so a submission can name a class instead of a number.
"""

from __future__ import annotations

from django.db import models

from core.validators import validate_dns_label

# Kueue stores the value as an int32.
PRIORITY_MIN = -(2**31)
PRIORITY_MAX = 2**31 - 1


class WorkloadPriorityClass(models.Model):
    name = models.CharField(max_length=63, unique=True, validators=[validate_dns_label])
    value = models.IntegerField(help_text="The priority workloads of this class get (higher goes first)")
    description = models.CharField(max_length=2048, blank=True)
    kueue_extra = models.JSONField(
        default=dict, blank=True, help_text="Kueue manifest fields fairportal does not model, kept for export"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-value", "name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(value__gte=PRIORITY_MIN) & models.Q(value__lte=PRIORITY_MAX),
                name="workload_priority_class_value_int32",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        from django.core.exceptions import ValidationError

        super().clean()
        if self.value is not None and not PRIORITY_MIN <= self.value <= PRIORITY_MAX:
            raise ValidationError(
                {"value": f"must be a 32-bit integer ({PRIORITY_MIN}..{PRIORITY_MAX}), got {self.value}"}
            )
