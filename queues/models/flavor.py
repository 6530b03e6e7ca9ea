"""ResourceFlavor: a kind of capacity (default, a100, spot)."""

from django.db import models

from queues.models.validators import validate_dns_label


class ResourceFlavor(models.Model):
    name = models.CharField(max_length=63, unique=True, validators=[validate_dns_label])
    description = models.CharField(max_length=200, blank=True)
    node_labels = models.JSONField(default=dict, blank=True, help_text="Kueue nodeLabels, kept for export")
    kueue_extra = models.JSONField(
        default=dict, blank=True, help_text="Kueue manifest fields fairportal does not model, kept for export"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
