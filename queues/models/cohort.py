"""Cohort: a tree of ClusterQueues that borrow from each other; may own quota itself."""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import models

from queues.models.choices import AdmissionMode
from queues.models.kueue import KueueObject
from queues.models.status import FairSharingStatus
from queues.models.validators import validate_dns_label, validate_non_negative_weight


class Cohort(FairSharingStatus, KueueObject):
    name = models.CharField(max_length=63, unique=True, validators=[validate_dns_label])
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    weight = models.DecimalField(
        max_digits=12, decimal_places=4, default=Decimal(1), validators=[validate_non_negative_weight]
    )
    admission_mode = models.CharField(
        max_length=40,
        choices=AdmissionMode.choices,
        blank=True,
        help_text="admissionScope.admissionMode; empty: this cohort is not an admission scope",
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=models.Q(weight__gte=0), name="cohort_weight_gte_0"),
            models.CheckConstraint(condition=~models.Q(parent=models.F("id")), name="cohort_not_own_parent"),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        super().clean()
        if self.parent_id is None:
            return
        if self.pk is not None and self.parent_id == self.pk:
            raise ValidationError({"parent": "a cohort cannot be its own parent"})
        path = [self.name]
        node = self.parent
        seen: set[int] = set()
        while node is not None:
            path.append(node.name)
            if (self.pk is not None and node.pk == self.pk) or node.pk in seen:
                raise ValidationError({"parent": f"would create a cycle: {' -> '.join(path)}"})
            seen.add(node.pk)
            node = node.parent
