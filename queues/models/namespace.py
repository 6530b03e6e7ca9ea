"""Namespace: a tenant, with a weight inside its queues and hard quotas on admitted usage."""

from __future__ import annotations

from decimal import Decimal

from django.db import models

from core.validators import validate_dns_label, validate_positive_weight, validate_resource_name
from queues.fields import QuantityField
from queues.models.choices import WithinNamespacePreemption
from queues.models.status import FairSharingStatus

MAX_PRIORITY_CLASSES = 64


class Namespace(FairSharingStatus):
    name = models.CharField(max_length=63, unique=True, validators=[validate_dns_label])
    weight = models.DecimalField(
        max_digits=12,
        decimal_places=4,
        default=Decimal(1),
        validators=[validate_positive_weight],
        help_text="Share of its ClusterQueues against other namespaces (Volcano namespace weight)",
    )
    preemption_within_namespace = models.CharField(
        max_length=30,
        choices=WithinNamespacePreemption.choices,
        default=WithinNamespacePreemption.NEVER,
        help_text="preemption.withinNamespace: may a workload over the hard quota evict the namespace's own "
        "lower-priority admitted workloads",
    )
    allowed_priority_classes = models.JSONField(
        default=list,
        blank=True,
        help_text="Names of the WorkloadPriorityClasses its tenants may submit with (the default is always "
        "allowed); a tenant never sets a raw priority",
    )
    default_priority_class = models.ForeignKey(
        "queues.WorkloadPriorityClass",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The class of a submission that names none; empty: priority 0",
    )
    description = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=models.Q(weight__gt=0), name="namespace_weight_gt_0"),
            models.CheckConstraint(
                condition=models.Q(preemption_within_namespace__in=WithinNamespacePreemption.values),
                name="namespace_preemption_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def hard_quota(self) -> dict[str, int]:
        return {row.resource: row.hard for row in self.quotas.all()}

    def priority_class_names(self) -> list[str]:
        """The classes its tenants may use: the allowed list and the default."""
        names = [name for name in self.allowed_priority_classes or [] if isinstance(name, str)]
        if self.default_priority_class is not None and self.default_priority_class.name not in names:
            names.append(self.default_priority_class.name)
        return sorted(names)

    def clean(self) -> None:
        from django.core.exceptions import ValidationError

        from queues.models.priority_class import WorkloadPriorityClass

        super().clean()
        names = self.allowed_priority_classes
        if (
            not isinstance(names, list)
            or len(names) > MAX_PRIORITY_CLASSES
            or not all(isinstance(name, str) and 0 < len(name) <= 63 for name in names)
        ):
            raise ValidationError(
                {
                    "allowed_priority_classes": f"expected a list of at most {MAX_PRIORITY_CLASSES} WorkloadPriorityClass names"
                }
            )
        known = set(WorkloadPriorityClass.objects.filter(name__in=names).values_list("name", flat=True))
        missing = sorted(set(names) - known)
        if missing:
            raise ValidationError(
                {
                    "allowed_priority_classes": f"no WorkloadPriorityClass named {', '.join(repr(m[:63]) for m in missing[:5])}"
                }
            )


class NamespaceQuota(models.Model):
    """Like a Kubernetes ResourceQuota: admitted usage in the namespace never exceeds ``hard``."""

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="quotas")
    resource = models.CharField(max_length=253, validators=[validate_resource_name])
    hard = QuantityField(help_text="e.g. 64, 256Gi, 8")

    class Meta:
        ordering = ["namespace_id", "resource"]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "resource"], name="namespace_quota_unique_resource"),
            models.CheckConstraint(condition=models.Q(hard__gte=0), name="namespace_quota_hard_gte_0"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace_id}:{self.resource}"

    def clean(self) -> None:
        from django.core.exceptions import ValidationError

        super().clean()
        if self.hard is not None and self.hard < 0:
            raise ValidationError({"hard": "must not be negative"})
