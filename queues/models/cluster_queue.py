"""ClusterQueue: a pool of quota per flavor and resource, shared by its LocalQueues."""

from __future__ import annotations

from decimal import Decimal

from django.db import models

from core.validators import validate_dns_label, validate_non_negative_weight
from queues.models.choices import (
    AdmissionMode,
    QueueingStrategy,
    ReclaimWithinCohort,
    StopPolicy,
    WithinClusterQueuePreemption,
)
from queues.models.kueue import KueueObject
from queues.models.status import FairSharingStatus


class ClusterQueue(FairSharingStatus, KueueObject):
    # The policy a form or an API call edits besides its name, cohort and quota rows.
    POLICY_FIELDS = (
        "weight",
        "queueing_strategy",
        "admission_mode",
        "preemption_within_cluster_queue",
        "reclaim_within_cohort",
        "stop_policy",
        "description",
    )

    name = models.CharField(max_length=63, unique=True, validators=[validate_dns_label])
    cohort = models.ForeignKey(
        "queues.Cohort", null=True, blank=True, on_delete=models.PROTECT, related_name="cluster_queues"
    )
    weight = models.DecimalField(
        max_digits=12,
        decimal_places=4,
        default=Decimal(1),
        validators=[validate_non_negative_weight],
        help_text="fairSharing.weight: importance when competing for shared capacity",
    )
    queueing_strategy = models.CharField(
        max_length=20, choices=QueueingStrategy.choices, default=QueueingStrategy.BEST_EFFORT_FIFO
    )
    admission_mode = models.CharField(
        max_length=40,
        choices=AdmissionMode.choices,
        blank=True,
        help_text="admissionScope.admissionMode; empty: not an admission scope (a cohort above may be)",
    )
    preemption_within_cluster_queue = models.CharField(
        max_length=30, choices=WithinClusterQueuePreemption.choices, default=WithinClusterQueuePreemption.NEVER
    )
    reclaim_within_cohort = models.CharField(
        max_length=20, choices=ReclaimWithinCohort.choices, default=ReclaimWithinCohort.NEVER
    )
    stop_policy = models.CharField(max_length=20, choices=StopPolicy.choices, default=StopPolicy.NONE)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=models.Q(weight__gte=0), name="cluster_queue_weight_gte_0"),
            models.CheckConstraint(
                condition=models.Q(queueing_strategy__in=QueueingStrategy.values),
                name="cluster_queue_strategy_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(stop_policy__in=StopPolicy.values), name="cluster_queue_stop_policy_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.name
