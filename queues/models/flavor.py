"""ResourceFlavor: a kind of capacity (default, a100, spot)."""

from django.core.exceptions import ValidationError
from django.db import models

from core.validators import node_label_errors, validate_dns_label
from queues.models.cluster import default_cluster_id
from queues.models.kueue import KueueObject


class ResourceFlavor(KueueObject):
    """A kind of capacity on one cluster: the flavor the pass assigns decides where a workload runs.

    ``cluster`` defaults to the installation's default cluster (``Cluster.from_settings``).
    """

    name = models.CharField(max_length=63, unique=True, validators=[validate_dns_label])
    cluster = models.ForeignKey(
        "queues.Cluster",
        on_delete=models.PROTECT,
        related_name="flavors",
        default=default_cluster_id,
        help_text="The cluster whose capacity this flavor is (workloads admitted in it run there)",
    )
    node_labels = models.JSONField(default=dict, blank=True, help_text="Kueue nodeLabels, kept for export")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        """Node labels are Kubernetes labels (``core.validators.node_label_errors``), whichever
        surface writes them."""
        super().clean()
        errors = node_label_errors(self.node_labels)
        if errors:
            raise ValidationError(
                {
                    "node_labels": [
                        f"{name[:63]}: {message}" if name else message for name, ms in errors.items() for message in ms
                    ]
                }
            )
