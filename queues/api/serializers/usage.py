"""The usage time series written by the control loop's sampler, for charts and scripts."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import ResourceQuantitiesField
from core.api.serializers import FiniteFloatField
from queues.models import UsageSample


class UsageSampleSerializer(serializers.ModelSerializer):
    """Amounts in base units (cores, bytes, GPUs), as in the simulator's series."""

    allocated = ResourceQuantitiesField(read_only=True, help_text="Admitted requests at the sample")
    consumed = ResourceQuantitiesField(read_only=True, help_text="Decayed usage after the sample")
    capacity = ResourceQuantitiesField(read_only=True, help_text="Nominal quota (ClusterQueues and cohorts)")
    weighted_share = FiniteFloatField(read_only=True, allow_null=True)

    class Meta:
        model = UsageSample
        fields = [
            "id",
            "sampled_at",
            "kind",
            "object_id",
            "resolution",
            "allocated",
            "consumed",
            "capacity",
            "weighted_share",
            "admitted_count",
            "pending_count",
        ]
        read_only_fields = fields
