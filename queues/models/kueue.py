"""Fields of every object fairportal imports from and exports to Kueue manifests."""

from django.db import models


class KueueObject(models.Model):
    """A note, the manifest fields fairportal does not model (kept for export), the notation of
    its quantities as the manifest wrote them, and when the row was created."""

    description = models.CharField(max_length=200, blank=True)
    kueue_extra = models.JSONField(
        default=dict, blank=True, help_text="Kueue manifest fields fairportal does not model, kept for export"
    )
    kueue_notation = models.JSONField(
        default=dict,
        blank=True,
        editable=False,
        help_text="How the Kueue manifest wrote each quantity ({path: text}, e.g. 800Gi), so export writes it back "
        "the same way; a text that no longer matches the stored amount is ignored",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
