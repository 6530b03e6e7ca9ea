"""Fields of every object fairportal imports from and exports to Kueue manifests."""

from django.db import models


class KueueObject(models.Model):
    """A note, the manifest fields fairportal does not model (kept for export), and when the row
    was created."""

    description = models.CharField(max_length=200, blank=True)
    kueue_extra = models.JSONField(
        default=dict, blank=True, help_text="Kueue manifest fields fairportal does not model, kept for export"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
