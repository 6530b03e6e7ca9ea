"""LocalQueue: a tenant's entry point (``namespace/name``) into one ClusterQueue."""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import models

from core.validators import validate_dns_label, validate_non_negative_weight
from queues.models.choices import StopLevel, StopPolicy
from queues.models.kueue import KueueObject
from queues.models.status import FairSharingStatus


class LocalQueue(FairSharingStatus, KueueObject):
    namespace = models.ForeignKey("queues.Namespace", on_delete=models.PROTECT, related_name="local_queues")
    name = models.CharField(max_length=63, validators=[validate_dns_label])
    cluster_queue = models.ForeignKey("queues.ClusterQueue", on_delete=models.PROTECT, related_name="local_queues")
    weight = models.DecimalField(
        max_digits=12,
        decimal_places=4,
        default=Decimal(1),
        validators=[validate_non_negative_weight],
        help_text="fairSharing.weight against the other LocalQueues of the namespace",
    )
    stop_policy = models.CharField(max_length=20, choices=StopPolicy.choices, default=StopPolicy.NONE)
    stop_level = models.CharField(
        max_length=10,
        choices=StopLevel.choices,
        blank=True,
        editable=False,
        help_text="Who set the stop: only this level or a higher one may change or lift it",
    )
    stopped_by = models.CharField(max_length=150, blank=True, editable=False, help_text="User who set the stop")
    historical_share = models.JSONField(
        default=dict, blank=True, help_text="TimeAware: windowed decayed usage / scope capacity, per resource"
    )

    class Meta:
        ordering = ["namespace__name", "name"]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "name"], name="local_queue_unique_name"),
            models.CheckConstraint(condition=models.Q(weight__gte=0), name="local_queue_weight_gte_0"),
            models.CheckConstraint(
                condition=models.Q(stop_policy__in=StopPolicy.values), name="local_queue_stop_policy_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.key

    @property
    def key(self) -> str:
        """``namespace/name``, the name used in scenario files and the engine."""
        return f"{self.namespace.name}/{self.name}"

    def clean(self) -> None:
        super().clean()
        if self.pk is None:
            return
        stored = LocalQueue.objects.filter(pk=self.pk).values("cluster_queue_id", "namespace_id").first()
        if stored is None:
            return
        if stored["cluster_queue_id"] != self.cluster_queue_id and self.workloads.exists():
            raise ValidationError(
                {"cluster_queue": "cannot change while the LocalQueue holds workloads (as in Kueue, it is immutable)"}
            )
        if stored["namespace_id"] != self.namespace_id and self.workloads.exists():
            raise ValidationError({"namespace": "cannot change while the LocalQueue holds workloads"})
