"""What-if simulations: small runs answered at once, large ones queued and polled by id."""

from __future__ import annotations

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from fairportal.api.views import ApiViewSet
from fairportal.enqueue import enqueue_on_commit
from queues.api.serializers.simulations import (
    SimulationRequestSerializer,
    SimulationRunSerializer,
    SimulationRunSummarySerializer,
)
from queues.api.tasks import run_simulation
from queues.engine.errors import ValidationError as EngineValidationError
from queues.models import SimulationRun
from queues.services import simulations


class SimulationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    """Admins and tenants run scenarios they post (no live data is read). A run is visible to
    the user who started it, and to admins; anyone else gets a 404."""

    serializer_class = SimulationRunSerializer
    ordering_fields = ["created_at", "status"]
    tenant_write_actions = frozenset({"create"})
    max_body_bytes = 1024 * 1024  # scenarios list workloads; 1 MiB is thousands of them

    def base_queryset(self) -> QuerySet:
        return SimulationRun.objects.all()

    def scope(self, queryset: QuerySet) -> QuerySet:
        return queryset if self.access.is_admin else queryset.filter(owner=self.request.user)

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
            run = simulations.create_run(prepared, owner=request.user)
            enqueue_on_commit(run_simulation, str(run.pk), on_failure=lambda: simulations.mark_unsent(run.pk))
        run.refresh_from_db()
        body = SimulationRunSerializer(run).data
        if run.status == SimulationRun.Status.FAILED:  # the broker refused the message: nothing will run
            return Response(
                {"detail": run.error, "code": "queue_unavailable", "run": body}, status=status.HTTP_503_SERVICE_UNAVAILABLE
            )
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": f"{request.path}{run.pk}/"})

    def _answer_now(self, prepared: simulations.Prepared) -> Response:
        started = timezone.now()
        result = simulations.run_now(prepared)
        run = SimulationRun(
            status=SimulationRun.Status.SUCCEEDED,
            scenario_name=prepared.scenario.name,
            result=result,
            created_at=started,
            started_at=started,
            finished_at=timezone.now(),
        )
        run.id = None  # not stored: nothing to poll
        return Response(SimulationRunSerializer(run).data)
