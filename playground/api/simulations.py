"""``/api/v1/simulations/``: a scenario document in, the simulator's JSON out (now or later).

A thin facade over playground runs (``playground.services.simulations``): small runs are
answered at once and not stored; larger ones are playground runs with no edits, queued for the
what-if worker and polled by id. Request and response fields are the API's own (``scenario`` is
the scenario's name, ``result`` the simulator's JSON), not the playground's comparison.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.views import ApiViewSet
from fairshare.errors import ValidationError as EngineValidationError
from playground.models import Run
from playground.services import simulations


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


class SimulationRunSerializer(serializers.Serializer):
    """A run: ``id`` is null for a run answered at once (it is not stored)."""

    id = serializers.UUIDField(read_only=True, allow_null=True)
    status = serializers.ChoiceField(choices=Run.Status.choices, read_only=True)
    scenario = serializers.CharField(source="scenario.name", read_only=True)
    result = serializers.JSONField(
        source="baseline.data",
        read_only=True,
        allow_null=True,
        default=None,
        help_text="events, workloads, series, summary (DESIGN.md); null until the run succeeded",
    )
    error = serializers.CharField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    started_at = serializers.DateTimeField(read_only=True, allow_null=True)
    finished_at = serializers.DateTimeField(read_only=True, allow_null=True)


class SimulationRunSummarySerializer(SimulationRunSerializer):
    """A run in a list: without its (possibly large) result."""

    result = None  # type: ignore[assignment]  # DRF drops a field declared None in a subclass


class SimulationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    """Admins and tenants run scenarios they post (no live data is read). A run is visible to
    the user who started it, and to admins; anyone else gets a 404."""

    serializer_class = SimulationRunSerializer
    ordering_fields = ["created_at", "status"]
    tenant_scoped = True  # a user's own runs (admins: all), the playground's rule
    tenant_write_actions = frozenset({"create"})
    max_body_bytes = 1024 * 1024  # scenarios list workloads; 1 MiB is thousands of them

    def base_queryset(self) -> QuerySet:
        rows = simulations.runs_of_simulations()
        return rows if self.action == "list" else rows.select_related("baseline")

    def get_serializer_class(self) -> type:
        return SimulationRunSummarySerializer if self.action == "list" else SimulationRunSerializer

    @extend_schema(
        request=SimulationRequestSerializer,
        responses={
            200: OpenApiResponse(SimulationRunSerializer, description="Run at once; the result is in the body"),
            202: OpenApiResponse(SimulationRunSerializer, description="Queued; poll the Location until it is done"),
            503: OpenApiResponse(description="The task queue could not be reached; the run was marked failed"),
        },
        summary="Simulate a scenario (what-if)",
        description=f"Up to {simulations.INLINE_MAX_WORKLOADS} workloads and {simulations.INLINE_MAX_STEPS} "
        "ticks run at once (200); larger runs are queued for a worker (202) and polled by id. Scenario "
        'errors come back as 400 under "scenario", keyed by the field path.',
    )
    def create(self, request: Request) -> Response:
        payload = SimulationRequestSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            prepared = simulations.prepare(payload.validated_data["scenario"], payload.validated_data["set"])
            if prepared.runs_inline and not payload.validated_data["run_in_background"]:
                return self._answer_now(prepared)
        except EngineValidationError as error:
            raise ValidationError({"scenario": {error.field or "scenario": [error.message]}}) from None
        with transaction.atomic():
            run = simulations.start_run(prepared, owner=request.user)
        run = self.base_queryset().get(pk=run.pk)
        body = SimulationRunSerializer(run).data
        if run.status == Run.Status.FAILED:  # the broker refused the message: nothing will run
            return Response(
                {"detail": run.error, "code": "queue_unavailable", "run": body}, status=status.HTTP_503_SERVICE_UNAVAILABLE
            )
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": f"{request.path}{run.pk}/"})

    def _answer_now(self, prepared: simulations.Prepared) -> Response:
        started = timezone.now()
        result = simulations.run_now(prepared)
        answer = {
            "id": None,  # not stored: nothing to poll
            "status": Run.Status.SUCCEEDED,
            "scenario": {"name": prepared.scenario.name},
            "baseline": {"data": result},
            "error": "",
            "created_at": started,
            "started_at": started,
            "finished_at": timezone.now(),
        }
        return Response(SimulationRunSerializer(answer).data)
