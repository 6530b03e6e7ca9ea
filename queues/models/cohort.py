"""Cohort: a tree of ClusterQueues that borrow from each other; may own quota itself."""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import models

from core.validators import validate_dns_label, validate_non_negative_weight
from fairshare.quota.scopes import ancestry, closes_cycle
from queues.models.choices import AdmissionMode
from queues.models.kueue import KueueObject
from queues.models.status import FairSharingStatus


class Cohort(FairSharingStatus, KueueObject):
    name = models.CharField(max_length=63, unique=True, validators=[validate_dns_label])
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="children")
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
        parent_of: dict[int, int | None] = dict(Cohort.objects.values_list("id", "parent_id"))
        if self.pk is not None:
            parent_of[self.pk] = self.parent_id
        chain = ancestry(self.parent_id, parent_of)
        if self.pk is not None and self.pk in chain:
            loop = chain[: chain.index(self.pk) + 1]
        elif (repeat := closes_cycle(chain, parent_of)) is not None:
            loop = (*chain, repeat)
        else:
            return
        names = dict(Cohort.objects.filter(id__in=loop).values_list("id", "name"))
        names[self.pk] = self.name
        path = " -> ".join([self.name, *(names[node] for node in loop)])
        raise ValidationError({"parent": f"would create a cycle: {path}"})
