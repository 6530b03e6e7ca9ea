"""ResourceFlavor: a kind of capacity (default, a100, spot)."""

from django.core.exceptions import ValidationError
from django.db import models

from core.validators import node_label_errors, validate_dns_label
from queues.models.kueue import KueueObject


class ResourceFlavor(KueueObject):
    name = models.CharField(max_length=63, unique=True, validators=[validate_dns_label])
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
