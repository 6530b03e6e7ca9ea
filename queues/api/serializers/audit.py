"""PolicyChange audit rows, read-only."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.api.permissions import request_access
from core.models import PolicyChange
from core.redaction import redact_policy_state


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

    def to_representation(self, instance: PolicyChange) -> dict[str, Any]:
        """Staff-only fields (a budget's alert destinations) leave the pictures for tenants."""
        data = super().to_representation(instance)
        request = self.context.get("request")
        if request is not None:
            access = request_access(request)
            data["before"] = redact_policy_state(access, instance.object_type, instance.before)
            data["after"] = redact_policy_state(access, instance.object_type, instance.after)
            data["changed_fields"] = PolicyChange.fields_changed(data["before"], data["after"])
        return data
