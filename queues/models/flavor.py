"""ResourceFlavor: a kind of capacity (default, a100, spot)."""

from django.db import models

from core.validators import validate_dns_label
from queues.models.kueue import KueueObject


class ResourceFlavor(KueueObject):
    name = models.CharField(max_length=63, unique=True, validators=[validate_dns_label])
    node_labels = models.JSONField(default=dict, blank=True, help_text="Kueue nodeLabels, kept for export")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
