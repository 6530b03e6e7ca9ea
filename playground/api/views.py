"""Playground endpoints: thin views over ``playground.services`` and ``playground.selectors``:
presets, scenarios, runs, and ``/api/v1/simulations/`` (a facade over playground runs).

Conventions of the rest of the API: token or session auth, tenants scoped to what they own
(another user's scenario or run is a 404), 400s naming the field (a scenario field by its path,
an edit as ``edits.<i>``), 409 for a state that does not allow the action.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.permissions import PlaygroundPermission
from core.api.views import ApiViewSet
from fairshare.durations import parse_duration
from fairshare.errors import ValidationError as EngineValidationError
from playground import documents, selectors
from playground.api.serializers import (
    ApplicationSerializer,
    ApplyProblemSerializer,
    NotReadySerializer,
    PresetSerializer,
    ResultsSerializer,
    RunCreateSerializer,
    RunSerializer,
    ScenarioCreateSerializer,
    ScenarioDetailSerializer,
    ScenarioSerializer,
    SimulationRequestSerializer,
    SimulationRunSerializer,
    SimulationRunSummarySerializer,
)
from playground.documents import EditError
from playground.live_export import LiveOptions
from playground.models import Run
from playground.presets import PRESETS, get_preset
from playground.services import runs, scenarios, simulations
from playground.services.apply import ApplyConflict, ApplyError, RunNotFinished, apply_run


class PresetViewSet(viewsets.ViewSet):
    """The built-in scenarios, one per seed story, with the edit that tells it."""

    permission_classes = [PlaygroundPermission]
    serializer_class = PresetSerializer

    lookup_value_regex = "[^/]+"

    @extend_schema(responses=PresetSerializer(many=True))
    def list(self, request: Request) -> Response:
        return Response(PresetSerializer(PRESETS, many=True).data)

    @extend_schema(responses={200: PresetSerializer, 404: OpenApiResponse(description="No such preset")})
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        preset = get_preset(pk or "")
        if preset is None:
            raise NotFound(f"no preset named {pk!r}")
        return Response(PresetSerializer(preset).data)


class PlaygroundViewSet(ApiViewSet):
    permission_classes = [PlaygroundPermission]
    admin_actions = frozenset({"apply"})


class ScenarioViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, PlaygroundViewSet):
    """Scenarios to run what-ifs on. Admins see all; tenants their own (another's is a 404).
    Tenants starting from today's cluster get their view of it: other namespaces renamed."""

    ordering_fields = ["created_at", "name"]
    max_body_bytes = documents.MAX_DOCUMENT_BYTES

    def get_queryset(self) -> QuerySet:
        if getattr(self, "swagger_fake_view", False):
            from playground.models import Scenario

            return Scenario.objects.none()
        queryset = selectors.visible_scenarios(self.access)
        return queryset.defer(None) if self.action == "retrieve" else queryset

    def get_serializer_class(self) -> type:
        return ScenarioDetailSerializer if self.action == "retrieve" else ScenarioSerializer

    @extend_schema(
        request=ScenarioCreateSerializer,
        responses={201: ScenarioDetailSerializer},
        summary="Create a scenario from a preset, today's cluster or a document",
        description='Errors in a posted document come back under "document", keyed by the field path '
        "(e.g. clusterQueues[0].quotas[0].resources.cpu.nominal).",
    )
    def create(self, request: Request) -> Response:
        payload = ScenarioCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        try:
            if data["source"] == "preset":
                scenario = scenarios.create_from_preset(data["preset"], owner=request.user)
            elif data["source"] == "document":
                scenario = scenarios.create_from_document(data["document"], owner=request.user)
            else:
                options = LiveOptions(
                    days=data["days"], lookahead_seconds=parse_duration(data["lookahead"], "lookahead")
                )
                scenario = scenarios.create_from_live(self.access, options=options)
        except EngineValidationError as error:
            raise ValidationError(_scenario_error(data["source"], error)) from None
        return Response(ScenarioDetailSerializer(scenario).data, status=status.HTTP_201_CREATED)


def _scenario_error(source: str, error: EngineValidationError) -> dict[str, Any]:
    if error.field in ("preset", "days", "lookahead", "source"):
        return {error.field: [error.message]}
    return {"document": {error.field or "document": [error.message]}}


class RunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, PlaygroundViewSet):
    """What-if runs: baseline against edited, simulated by a worker; poll until ``succeeded``,
    then read the comparison. Admins apply a run's edits to the real policy."""

    serializer_class = RunSerializer
    ordering_fields = ["created_at", "status"]

    def get_queryset(self) -> QuerySet:
        if getattr(self, "swagger_fake_view", False):
            return Run.objects.none()
        queryset = selectors.visible_runs(self.access)
        return selectors.with_comparison(queryset) if self.action == "comparison" else queryset

    @extend_schema(
        request=RunCreateSerializer,
        responses={202: OpenApiResponse(RunSerializer, description="Queued; poll the run until it succeeded")},
        summary="Run a what-if: the scenario as it is against the scenario with the edits",
        description="An edit that cannot be applied, or that makes the scenario invalid, is a 400 under "
        '"edits" keyed by its position.',
    )
    def create(self, request: Request) -> Response:
        payload = RunCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        scenario = selectors.visible_scenarios(self.access).defer(None).filter(pk=data["scenario"]).first()
        if scenario is None:
            raise ValidationError({"scenario": ["no scenario with this id that you may use"]})
        try:
            run = runs.start_run(scenario, edits=data["edits"], owner=request.user, title=data["title"])
        except EditError as error:
            raise ValidationError({"edits": {str(error.index): [error.problem]}}) from None
        except EngineValidationError as error:
            raise ValidationError({"scenario": [str(error)]}) from None
        body = RunSerializer(selectors.visible_runs(self.access).get(pk=run.pk)).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": f"{request.path}{run.pk}/"})

    @extend_schema(
        responses={200: OpenApiTypes.OBJECT, 409: NotReadySerializer},
        summary="The side-by-side comparison of a succeeded run",
        description="kpis (each with its scope: run, submitted or end; utilisation and waits with their "
        "figures while contended), contention (per side: contended time, utilisation and waits then), "
        "utilization, tenants (wait distributions), localQueues, budgets (per side in the replay's time "
        "base: exhausted, forecast past its end, or never; shift), clockStart, moved (workloads that start "
        "earlier or later), series (thinned, per side).",
    )
    @action(detail=True, methods=["get"])
    def comparison(self, request: Request, pk: str | None = None) -> Response:
        run = self.get_object()
        if run.status != Run.Status.SUCCEEDED:
            return _not_ready(run)
        return Response(run.comparison)

    @extend_schema(
        responses={200: ResultsSerializer, 409: NotReadySerializer},
        summary="Both simulator results of a succeeded run (docs/design.md JSON contract)",
    )
    @action(detail=True, methods=["get"])
    def results(self, request: Request, pk: str | None = None) -> Response:
        run = self.get_object()
        if run.status != Run.Status.SUCCEEDED or run.baseline_id is None or run.edited_id is None:
            return _not_ready(run)
        return Response({"baseline": run.baseline.data, "edited": run.edited.data})

    @extend_schema(
        request=None,
        responses={
            201: ApplicationSerializer,
            400: OpenApiResponse(ApplyProblemSerializer, description="Nothing to apply, or a model rule refuses it"),
            409: OpenApiResponse(ApplyProblemSerializer, description="Not succeeded, or the live policy changed"),
        },
        summary="Apply the run's edits to the real policy (admins only)",
        description="One transaction: the edited weights, quotas, modes and budgets, each object audited "
        "(surface playground, linked to the run). Fair-sharing knobs are returned as environment lines "
        "to set. A field whose live value is no longer the run's baseline is a 409 and nothing is written.",
    )
    @action(detail=True, methods=["post"])
    def apply(self, request: Request, pk: str | None = None) -> Response:
        run = self.get_object()
        try:
            with transaction.atomic():
                application = apply_run(run, actor=request.user)
        except (ApplyConflict, RunNotFinished) as error:
            code = "run_not_finished" if isinstance(error, RunNotFinished) else "policy_changed"
            return Response(
                {"detail": str(error), "code": code, "problems": error.problems}, status=status.HTTP_409_CONFLICT
            )
        except ApplyError as error:
            return Response({"detail": str(error), "problems": error.problems}, status=status.HTTP_400_BAD_REQUEST)
        return Response(ApplicationSerializer(application).data, status=status.HTTP_201_CREATED)


def _not_ready(run: Run) -> Response:
    return Response(
        {
            "detail": f"the run is {run.status}" + (f": {run.error}" if run.error else ""),
            "code": "run_not_finished",
            "status": run.status,
        },
        status=status.HTTP_409_CONFLICT,
    )


class SimulationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    """``/api/v1/simulations/``: a scenario document in, the simulator's JSON out, later.

    A thin facade over playground runs (``playground.services.simulations``): every run is a
    playground run with no edits, queued for the what-if worker under the user's cap and polled
    by id (nothing runs in the web process). Request and response fields are the API's own
    (``scenario`` is the scenario's name, ``result`` the simulator's JSON), not the playground's
    comparison.

    Admins and tenants run scenarios they post (no live data is read). A run is visible to
    the user who started it, and to admins; anyone else gets a 404."""

    serializer_class = SimulationRunSerializer
    ordering_fields = ["created_at", "status"]
    tenant_scoped = True  # a user's own runs (admins: all), the playground's rule
    tenant_write_actions = frozenset({"create"})
    max_body_bytes = (
        1024 * 1024
    )  # scenarios list workloads; 1 MiB is thousands of them (ScenarioLimits bound the counts)

    def base_queryset(self) -> QuerySet:
        rows = selectors.simulation_runs()
        return rows if self.action == "list" else rows.select_related("baseline")

    def get_serializer_class(self) -> type:
        return SimulationRunSummarySerializer if self.action == "list" else SimulationRunSerializer

    @extend_schema(
        request=SimulationRequestSerializer,
        responses={
            202: OpenApiResponse(SimulationRunSerializer, description="Queued; poll the Location until it is done"),
            503: OpenApiResponse(description="The task queue could not be reached; the run was marked failed"),
        },
        summary="Simulate a scenario (what-if)",
        description="Every run is queued for the what-if worker (202 with Location) and polled by id; "
        "``run_in_background`` is accepted and ignored. Scenario errors, and a scenario over the size "
        'limits, come back as 400 under "scenario", keyed by the field path.',
    )
    def create(self, request: Request) -> Response:
        payload = SimulationRequestSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            prepared = simulations.prepare(payload.validated_data["scenario"], payload.validated_data["set"])
        except EngineValidationError as error:
            raise ValidationError({"scenario": {error.field or "scenario": [error.message]}}) from None
        with transaction.atomic():  # the scenario goes with the run when the cap refuses it
            scenario = scenarios.create_from_simulation(prepared, owner=request.user)
            run = runs.start_run(scenario, edits=[], owner=request.user)
        run = self.base_queryset().get(pk=run.pk)
        body = SimulationRunSerializer(run).data
        if run.status == Run.Status.FAILED:  # the broker refused the message: nothing will run
            return Response(
                {"detail": run.error, "code": "queue_unavailable", "run": body},
                status=status.HTTP_503_SERVICE_UNAVAILABLE,
            )
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": f"{request.path}{run.pk}/"})
