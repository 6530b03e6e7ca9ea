"""What-if simulations: a scenario document in, the simulator's JSON out (now or later)."""

from __future__ import annotations

from rest_framework import serializers

from queues.models import SimulationRun


class SimulationRequestSerializer(serializers.Serializer):
    scenario = serializers.DictField(
        help_text='A scenario document (DESIGN.md "Scenario files"): camelCase, Kueue-like, as for manage.py simulate'
    )
    set = serializers.ListField(
        child=serializers.CharField(max_length=500),
        required=False,
        default=list,
        max_length=100,
        help_text='What-if edits, as --set: ["localQueues.team-a/main.weight=3"]',
    )
    run_in_background = serializers.BooleanField(
        default=False, help_text="Queue the run even when it is small enough to answer at once"
    )


class SimulationRunSerializer(serializers.ModelSerializer):
    """A run: ``id`` is null for a run answered at once (it is not stored)."""

    id = serializers.UUIDField(read_only=True, allow_null=True)
    scenario = serializers.CharField(source="scenario_name", read_only=True)
    result = serializers.JSONField(
        read_only=True,
        allow_null=True,
        help_text="events, workloads, series, summary (DESIGN.md); null until the run succeeded",
    )

    class Meta:
        model = SimulationRun
        fields = ["id", "status", "scenario", "result", "error", "created_at", "started_at", "finished_at"]
        read_only_fields = fields


class SimulationRunSummarySerializer(SimulationRunSerializer):
    """A run in a list: without its (possibly large) result."""

    class Meta(SimulationRunSerializer.Meta):
        fields = ["id", "status", "scenario", "error", "created_at", "started_at", "finished_at"]
        read_only_fields = fields
