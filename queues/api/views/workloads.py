"""Workloads: submit (idempotent), poll status, and the lifecycle reports of executors."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.db.models import Case, F, QuerySet, Value, When
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.views import ApiViewSet
from queues.api.serializers.workloads import (
    LifecycleReportSerializer,
    WorkloadSerializer,
    WorkloadSubmitSerializer,
)
from queues.filtersets import WorkloadFilterSet
from queues.models import Workload, WorkloadState
from queues.models.workload import attach_queue_positions
from queues.selectors import api as selectors
from queues.services import lifecycle
from queues.services.submission import request_fingerprint, submit_checked, submit_once

QUEUE_ORDER_STATES = frozenset({WorkloadState.PENDING, WorkloadState.ADMITTED})


def order_by_position(queryset: QuerySet, descending: bool) -> tuple[QuerySet, list[Any]]:
    """``?ordering=position``: per ClusterQueue (by name), the workloads the last admission pass
    ranked in its order, then those it has not seen yet (``queue_position_state: estimated``) in
    their LocalQueue's order (priority, queue time, name), then what is not pending; ``-position``
    is the exact reverse."""
    ranked = F("queue_position")
    waiting_first = Case(When(state=WorkloadState.PENDING, then=Value(0)), default=Value(1))
    if descending:
        order = [
            F("local_queue__cluster_queue__name").desc(),
            ranked.desc(nulls_first=True),
            waiting_first.desc(),
            F("priority").asc(),
            *(F(name).desc() for name in ("queued_at", "name", "id")),
        ]
    else:
        order = [
            F("local_queue__cluster_queue__name").asc(),
            ranked.asc(nulls_last=True),
            waiting_first.asc(),
            F("priority").desc(),
            *(F(name).asc() for name in ("queued_at", "name", "id")),
        ]
    return _with_positions(queryset), order


def order_by_queue_position(queryset: QuerySet, descending: bool) -> tuple[QuerySet, list[Any]]:
    """``?ordering=queue_position``: the last pass's position alone (across ClusterQueues, as before
    ``position``); workloads without one last either way."""
    ranked = F("queue_position")
    return _with_positions(queryset), [
        ranked.desc(nulls_last=True) if descending else ranked.asc(nulls_last=True),
        "id",
    ]


def _with_positions(queryset: QuerySet) -> QuerySet:
    """The last pass's positions joined in once, however many terms order by them."""
    if "queue_position" in queryset.query.annotations:
        return queryset
    return queryset.with_queue_position()  # type: ignore[attr-defined]  # a WorkloadQuerySet


IDEMPOTENCY_HEADER = "Idempotency-Key"
_KEY_SHAPE = re.compile(r"^[\x21-\x7e]{1,255}$")

IDEMPOTENCY_PARAMETER = OpenApiParameter(
    IDEMPOTENCY_HEADER,
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=False,
    pattern=_KEY_SHAPE.pattern,
    description="Any unique string per submission (a UUID). Retrying with the same key and body "
    "returns the workload the first request created (201, header Idempotent-Replayed: true); the same "
    "key with a different body is a 422. Keys are per user.",
)
TRANSITION_CONFLICT = OpenApiResponse(description="Not possible in the current state; the body names the state")


def lifecycle_schema(summary: str, *, with_message: bool = True) -> Callable:
    return extend_schema(
        request=LifecycleReportSerializer if with_message else None,
        responses={200: WorkloadSerializer, 409: TRANSITION_CONFLICT},
        summary=summary,
    )


@extend_schema_view(
    list=extend_schema(description="Tenants see their namespaces' workloads; executors and admins see all."),
    retrieve=extend_schema(description="Status to poll: state, queue position, pending reason, times."),
)
class WorkloadViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    serializer_class = WorkloadSerializer
    filterset_class = WorkloadFilterSet
    ordering_fields = ["priority", "queued_at", "created_at", "name", "state", "admitted_at"]
    # Terms that are not a field (``core.api.filters``): the queue order joins the positions in.
    ordering_aliases = {"position": order_by_position, "queue_position": order_by_queue_position}
    tenant_scoped = True
    tenant_write_actions = frozenset({"create", "cancel"})
    executor_actions = frozenset({"list", "retrieve", "start", "finish", "fail"})

    def default_ordering(self, request: Request) -> list[str] | None:
        """A list of pending work (``?state=Pending``, with or without ``Admitted``) is in queue
        order unless ``?ordering=`` says otherwise, as on the dashboard; other lists keep the
        model's order (priority, queue time, name)."""
        states = set(request.query_params.getlist("state"))
        return ["position"] if WorkloadState.PENDING in states and states <= QUEUE_ORDER_STATES else None

    def base_queryset(self) -> QuerySet:
        return selectors.workloads_with_queues()

    def paginate_queryset(self, queryset: QuerySet) -> list[Workload] | None:  # type: ignore[override]  # rows are Workloads here
        page = super().paginate_queryset(queryset)
        return None if page is None else attach_queue_positions(page)

    @extend_schema(
        request=WorkloadSubmitSerializer,
        parameters=[IDEMPOTENCY_PARAMETER],
        responses={
            201: WorkloadSerializer,
            422: OpenApiResponse(description="The Idempotency-Key was used before with a different body"),
            503: OpenApiResponse(
                description="command given and the cluster (Slurm) did not answer: nothing was submitted"
            ),
        },
        summary="Submit a workload",
        description="Editors of the LocalQueue's namespace and admins submit. Quantities in Kubernetes "
        'notation ("2Gi", "500m") or base-unit numbers. A resource the LocalQueue\'s ClusterQueue has '
        "no quota for is refused (400 on pod_sets).",
    )
    def create(self, request: Request) -> Response:
        key = self._idempotency_key(request)
        submission = WorkloadSubmitSerializer(data=request.data, context=self.get_serializer_context())
        submission.is_valid(raise_exception=True)
        fields = dict(submission.validated_data)
        local_queue = fields.pop("local_queue")
        if not self.access.can_edit_namespace(local_queue.namespace_id):
            raise PermissionDenied(
                f"submitting to {local_queue.key} needs the editor role in namespace {local_queue.namespace.name}"
            )
        result = submit_once(
            user=request.user,
            key=key,
            fingerprint=request_fingerprint(request.data),
            submit=lambda: submit_checked(local_queue=local_queue, **fields),
        )
        headers = {"Location": f"{request.path}{result.workload.pk}/"}
        if result.replayed:
            headers["Idempotent-Replayed"] = "true"
        body = WorkloadSerializer(self.fresh(result.workload), context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED, headers=headers)

    @lifecycle_schema("Executor: the admitted workload started running", with_message=False)
    @action(detail=True, methods=["post"])
    def start(self, request: Request, pk: str | None = None) -> Response:
        workload = self.get_object()  # 404 for another tenant's, 403 for a role that may not
        return self._present(lifecycle.start_workload(workload.pk))

    @lifecycle_schema("Executor: the admitted workload completed (fixes its wall time)")
    @action(detail=True, methods=["post"])
    def finish(self, request: Request, pk: str | None = None) -> Response:
        return self._report(lifecycle.finish_workload)

    @lifecycle_schema("Executor: the admitted workload failed (its wall time still counts)")
    @action(detail=True, methods=["post"])
    def fail(self, request: Request, pk: str | None = None) -> Response:
        return self._report(lifecycle.fail_workload)

    @lifecycle_schema("Editor or admin: withdraw a pending workload or stop an admitted one")
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        return self._report(lifecycle.cancel_workload)

    def _report(self, transition: Callable[..., Workload]) -> Response:
        workload = self.get_object()  # 404 for another tenant's, 403 for a role that may not
        report = LifecycleReportSerializer(data=self.request.data)
        report.is_valid(raise_exception=True)
        return self._present(transition(workload.pk, message=report.validated_data["message"]))

    def _present(self, workload: Workload) -> Response:
        return Response(WorkloadSerializer(self.fresh(workload), context=self.get_serializer_context()).data)

    @staticmethod
    def _idempotency_key(request: Request) -> str | None:
        key = request.headers.get(IDEMPOTENCY_HEADER)
        if key is None:
            return None
        if not _KEY_SHAPE.match(key):
            raise ValidationError({IDEMPOTENCY_HEADER: ["1 to 255 visible ASCII characters, e.g. a UUID"]})
        return key
