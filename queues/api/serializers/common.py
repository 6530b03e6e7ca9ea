"""The fair-sharing status block shared by the policy serializers."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import FormattedResourcesField, ResourceQuantitiesField
from core.api.serializers import FiniteFloatField


class FairSharingStatusSerializer(serializers.Serializer):
    """KEP-4136 ``FairSharingStatus``: decayed usage per resource in base units, written by the
    control loop. ``weighted_share`` is null before the first sample and when the weight is 0."""

    consumed_resources = ResourceQuantitiesField(read_only=True)
    consumed_resources_formatted = FormattedResourcesField(lambda obj: obj.consumed_resources or {})
    entry_penalty = ResourceQuantitiesField(read_only=True)
    last_update = serializers.DateTimeField(source="usage_last_update", read_only=True, allow_null=True)
    weighted_share = FiniteFloatField(read_only=True, allow_null=True)
