"""Playground API shapes: presets, scenarios, runs, comparisons, applications, and the single
simulations of ``/api/v1/simulations/`` (the API's own fields: ``scenario`` is the name, ``result``
the simulator's JSON)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework import serializers

from playground.live_export import MAX_DAYS
from playground.models import Application, Run, Scenario
from playground.presets import PRESETS

DURATION_SYNTAX = r"^([0-9]+(\.[0-9]+)?|([0-9]+(\.[0-9]+)?(ms|s|m|h|d|w))+)$"


class PresetSerializer(serializers.Serializer):
    slug = serializers.CharField(read_only=True)
    title = serializers.CharField(read_only=True)
    seed = serializers.CharField(read_only=True, help_text="The seed document the story comes from")
    story = serializers.CharField(read_only=True)
    suggested_edits = serializers.ListField(child=serializers.CharField(), read_only=True)


class ScenarioSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    page = serializers.SerializerMethodField(help_text="The scenario's page in the web UI")

    class Meta:
        model = Scenario
        fields = [
            "id",
            "name",
            "description",
            "source",
            "preset",
            "owner",
            "workload_count",
            "live_as_of",
            "live_options",
            "redacted",
            "created_at",
            "page",
        ]
        read_only_fields = fields

    def get_page(self, obj: Scenario) -> str:
        return reverse("playground:scenario", args=[obj.pk])


class ScenarioDetailSerializer(ScenarioSerializer):
    document = serializers.JSONField(
        read_only=True, help_text='The scenario document (docs/design.md "Scenario files")'
    )

    class Meta(ScenarioSerializer.Meta):
        fields = [*ScenarioSerializer.Meta.fields, "document"]
        read_only_fields = fields


class ScenarioCreateSerializer(serializers.Serializer):
    """Where a scenario starts: a preset, today's cluster, or a posted document."""

    source = serializers.ChoiceField(choices=["preset", "live", "document"])  # type: ignore[assignment]  # a field named like Field.source, as the API's
    preset = serializers.ChoiceField(
        choices=[preset.slug for preset in PRESETS],
        required=False,
        help_text="source=preset: a slug from /presets/",
        error_messages={"invalid_choice": "unknown preset: one of the slugs of /api/v1/playground/presets/"},
    )
    days = serializers.FloatField(
        required=False,
        default=1.0,
        min_value=0,
        max_value=MAX_DAYS,
        help_text="source=live: days of finished work to replay (0: start from now)",
    )
    lookahead = serializers.RegexField(
        DURATION_SYNTAX,
        required=False,
        default="6h",
        max_length=20,
        error_messages={"invalid": "not a duration (use e.g. 90s, 5m, 2h, 7d or 1h30m)"},
        help_text="source=live: how far past now to simulate, e.g. 6h (more than 0s, at most 30d)",
    )
    document = serializers.DictField(required=False, help_text="source=document: a scenario document")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["source"] == "preset" and not attrs.get("preset"):
            raise serializers.ValidationError({"preset": ["required when source is preset"]})
        if attrs["source"] == "document" and "document" not in attrs:
            raise serializers.ValidationError({"document": ["required when source is document"]})
        return attrs


class ApplicationSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor_name", read_only=True)
    policy_changes: Any = serializers.PrimaryKeyRelatedField(many=True, read_only=True)  # a ManyRelatedField

    class Meta:
        model = Application
        fields = ["id", "run", "actor", "applied_at", "deltas", "environment", "policy_changes"]
        read_only_fields = fields


class DeltaSerializer(serializers.Serializer):
    target = serializers.ChoiceField(
        choices=["database", "environment", "simulation"],
        read_only=True,
        help_text="database: apply writes it; environment: set the variable; simulation: not policy",
    )
    kind = serializers.CharField(read_only=True)
    name = serializers.CharField(read_only=True)
    field = serializers.CharField(read_only=True)
    before = serializers.JSONField(read_only=True, allow_null=True)
    after = serializers.JSONField(read_only=True, allow_null=True)
    note = serializers.CharField(read_only=True)
    label = serializers.CharField(read_only=True)  # type: ignore[assignment]  # a field named like Field.label, as the API's


class ApplicationSummarySerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor_name", read_only=True)

    class Meta:
        model = Application
        fields = ["id", "actor", "applied_at"]
        read_only_fields = fields


class RunSerializer(serializers.ModelSerializer):
    scenario = serializers.UUIDField(source="scenario_id", read_only=True)
    owner = serializers.CharField(source="owner.username", read_only=True)
    deltas = DeltaSerializer(many=True, read_only=True)
    applications = ApplicationSummarySerializer(many=True, read_only=True)
    page = serializers.SerializerMethodField(help_text="The run's shareable page in the web UI")

    class Meta:
        model = Run
        fields = [
            "id",
            "scenario",
            "owner",
            "title",
            "edits",
            "deltas",
            "environment",
            "status",
            "phase",
            "progress",
            "error",
            "created_at",
            "started_at",
            "finished_at",
            "applications",
            "page",
        ]
        read_only_fields = fields

    def get_page(self, obj: Run) -> str:
        return reverse("playground:run", args=[obj.pk])


class RunCreateSerializer(serializers.Serializer):
    scenario = serializers.UUIDField(help_text="A scenario you may see")
    edits = serializers.ListField(
        child=serializers.CharField(max_length=500),
        max_length=100,
        help_text='--set edits: ["localQueues.team-a/main.weight=3"]',
    )
    title = serializers.CharField(required=False, default="", allow_blank=True, max_length=200)


class NotReadySerializer(serializers.Serializer):
    detail = serializers.CharField()
    code = serializers.ChoiceField(choices=["run_not_finished"])
    status = serializers.CharField()


class ApplyProblemSerializer(serializers.Serializer):
    detail = serializers.CharField()
    code = serializers.ChoiceField(
        choices=["run_not_finished", "policy_changed"], required=False, help_text="On a 409: why it conflicts"
    )
    problems = serializers.ListField(child=serializers.CharField())


class ResultsSerializer(serializers.Serializer):
    baseline = serializers.JSONField(help_text="The simulator's JSON for the scenario as it is")
    edited = serializers.JSONField(help_text="The simulator's JSON with the edits applied")


# --- /api/v1/simulations/ ---------------------------------------------------------------------


class SimulationRequestSerializer(serializers.Serializer):
    scenario = serializers.DictField(
        help_text='A scenario document (docs/design.md "Scenario files"): camelCase, Kueue-like, as for manage.py simulate'
    )
    set = serializers.ListField(
        child=serializers.CharField(max_length=500),
        required=False,
        default=list,
        max_length=100,
        help_text='What-if edits, as --set: ["localQueues.team-a/main.weight=3"]',
    )
    run_in_background = serializers.BooleanField(
        default=False, help_text="Accepted and ignored: every run is queued (202) and polled by id"
    )


class SimulationRunSerializer(serializers.Serializer):
    """A run of ``/api/v1/simulations/``; ``result`` once it succeeded."""

    id = serializers.UUIDField(read_only=True, allow_null=True)
    status = serializers.ChoiceField(choices=Run.Status.choices, read_only=True)
    scenario = serializers.CharField(source="scenario.name", read_only=True)
    result = serializers.JSONField(
        source="baseline.data",
        read_only=True,
        allow_null=True,
        default=None,
        help_text="events, workloads, series, summary (docs/design.md); null until the run succeeded",
    )
    error = serializers.CharField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    started_at = serializers.DateTimeField(read_only=True, allow_null=True)
    finished_at = serializers.DateTimeField(read_only=True, allow_null=True)


class SimulationRunSummarySerializer(SimulationRunSerializer):
    """A run in a list: without its (possibly large) result."""

    result = None  # type: ignore[assignment]  # DRF drops a field declared None in a subclass
