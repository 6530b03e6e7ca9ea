"""PolicyChange audit rows, read-only."""

from __future__ import annotations

from rest_framework import serializers

from queues.models import PolicyChange


class PolicyChangeSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor_name", read_only=True, help_text="User name; empty for the system")
    changed_fields = serializers.ListField(child=serializers.CharField(), read_only=True)
    before = serializers.DictField(read_only=True, allow_null=True, help_text="Policy picture before; null on create")
    after = serializers.DictField(read_only=True, allow_null=True, help_text="Policy picture after; null on delete")

    class Meta:
        model = PolicyChange
        fields = [
            "id",
            "at",
            "actor",
            "surface",
            "action",
            "object_type",
            "object_id",
            "object_repr",
            "before",
            "after",
            "changed_fields",
            "note",
        ]
        read_only_fields = fields
