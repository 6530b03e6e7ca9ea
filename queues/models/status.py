"""Fair-sharing status kept on every queue level (KEP-4136 ``FairSharingStatus``)."""

from typing import Any

from django.conf import settings
from django.db import models

from fairshare.types import UsageState, frozen_map
from fairshare.usage.usage import usage_score


class FairSharingStatus(models.Model):
    """Decayed usage state; lives in the database so that a restart loses nothing.

    ``consumed_resources`` and ``entry_penalty`` map resource names to milli-units (floats:
    a decayed average is not an integer). The penalty is folded into ``consumed_resources`` at
    the next sample.
    """

    consumed_resources = models.JSONField(default=dict, blank=True)
    entry_penalty = models.JSONField(default=dict, blank=True)
    usage_last_update = models.DateTimeField(null=True, blank=True)
    # Rescored on every save of the row as well (a weight edit), see ``save``.
    weighted_share = models.FloatField(null=True, blank=True, help_text="Score at the last sample")

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Every save of the row (admin, UI, API, playground, Kueue import) rescores it, so a
        weight edit shows in the score and in "who is ahead" at once, not at the next sample.
        A row never sampled keeps no score (null, as before its first sample)."""
        update_fields = kwargs.get("update_fields")
        sampled = self.usage_last_update is not None or self.consumed_resources or self.entry_penalty
        if sampled and (update_fields is None or "weight" in update_fields):
            self.weighted_share = self.current_score()
            if update_fields is not None:
                kwargs["update_fields"] = {*update_fields, "weighted_share"}
        super().save(*args, **kwargs)

    def current_score(self) -> float | None:
        """The KEP-4136 score of the stored usage under the current weight (None: infinite)."""
        state = UsageState(
            consumed=frozen_map({k: float(v) for k, v in (self.consumed_resources or {}).items()}),
            penalty=frozen_map({k: float(v) for k, v in (self.entry_penalty or {}).items()}),
            last_update=None,
        )
        score = usage_score(state, float(getattr(self, "weight", 1) or 0), settings.FAIR_SHARING)
        return None if score == float("inf") else score
