"""Fair-sharing status kept on every queue level (KEP-4136 ``FairSharingStatus``)."""

from django.db import models


class FairSharingStatus(models.Model):
    """Decayed usage state; lives in the database so that a restart loses nothing.

    ``consumed_resources`` and ``entry_penalty`` map resource names to milli-units (floats:
    a decayed average is not an integer). The penalty is folded into ``consumed_resources`` at
    the next sample.
    """

    consumed_resources = models.JSONField(default=dict, blank=True)
    entry_penalty = models.JSONField(default=dict, blank=True)
    usage_last_update = models.DateTimeField(null=True, blank=True)
    weighted_share = models.FloatField(null=True, blank=True, help_text="Score at the last sample")

    class Meta:
        abstract = True
