"""``shares/`` and ``priority/``: the read-only answers a terminal asks for (``bin/fairportal``).

``shares/`` is ``sshare``: one row per LocalQueue the caller may see, with its weights, decayed
usage, share against its entitlement and its place in its ClusterQueue's fair-share order.
``priority/`` is ``sprio``: workloads in queue order with the factors that order them, the
reason each waits and who is ahead (``priority/{id}/`` lists up to 50 queues ahead).
Tenants see their namespaces' rows only; another tenant's workload is a 404 and its queues are
"another tenant's queues".
"""

from __future__ import annotations

import django_filters
from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.views import ApiViewSet
from queues.api.serializers.observe import PriorityRowSerializer, ShareRowSerializer
from queues.filtersets import WorkloadFilterSet
from queues.models import LocalQueue, Workload
from queues.models.workload import attach_queue_positions, fill_estimated_positions
from queues.selectors import api as selectors
from queues.selectors.priority import AHEAD_FOR_ONE, AHEAD_IN_A_LIST, priority_rows
from queues.selectors.share_table import share_rows
from queues.selectors.workloads import SORTS


def _by_key(queryset: QuerySet, prefix: str, value: str) -> QuerySet:
    """``namespace/name`` (a value without a slash matches nothing)."""
    namespace, _, name = value.partition("/")
    return queryset.filter(**{f"{prefix}namespace__name": namespace, f"{prefix}name": name})


class ShareFilterSet(django_filters.FilterSet):
    namespace = django_filters.CharFilter(field_name="namespace__name", help_text="Name of the namespace")
    cluster_queue = django_filters.CharFilter(field_name="cluster_queue__name", help_text="Name of the ClusterQueue")
    local_queue = django_filters.CharFilter(method="filter_local_queue", help_text="namespace/name")

    class Meta:
        model = LocalQueue
        fields = ["namespace", "cluster_queue", "local_queue"]

    def filter_local_queue(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return _by_key(queryset, "", value)


class PriorityFilterSet(WorkloadFilterSet):
    workload = django_filters.CharFilter(method="filter_workload", help_text="namespace/name, exactly")

    class Meta(WorkloadFilterSet.Meta):
        fields = [*WorkloadFilterSet.Meta.fields, "workload"]

    def filter_workload(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return _by_key(queryset, "", value)


@extend_schema_view(
    list=extend_schema(
        summary="Fair-share standing per LocalQueue (like sshare)",
        description="Ordered by ClusterQueue, then namespace and name. Tenants get their namespaces' "
        "LocalQueues; ranks count every LocalQueue with pending work in the ClusterQueue.",
    )
)
class ShareViewSet(mixins.ListModelMixin, ApiViewSet):
    serializer_class = ShareRowSerializer
    filterset_class = ShareFilterSet
    filter_backends = [DjangoFilterBackend]
    tenant_scoped = True

    def base_queryset(self) -> QuerySet:
        return LocalQueue.objects.select_related("namespace", "cluster_queue").order_by(
            "cluster_queue__name", "namespace__name", "name"
        )

    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        rows = share_rows(list(page or []))
        return self.get_paginated_response(ShareRowSerializer(rows, many=True).data)


@extend_schema_view(
    list=extend_schema(
        summary="Workloads in queue order with their priority factors (like sprio)",
        description="Pending work first, in each ClusterQueue's order at the last admission pass; with "
        f"the reason each waits and up to {AHEAD_IN_A_LIST} queues ahead of it. Filter as workloads/ "
        "(?state=Pending&local_queue=team-a/main), or ?workload=namespace/name for one.",
    ),
    retrieve=extend_schema(
        summary="Why a workload waits (like sprio -j plus the reason)",
        description=f"Its factors, position, reason and up to {AHEAD_FOR_ONE} queues ahead of it.",
    ),
)
class PriorityViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    serializer_class = PriorityRowSerializer
    filterset_class = PriorityFilterSet
    filter_backends = [DjangoFilterBackend]
    tenant_scoped = True
    executor_actions = frozenset({"list", "retrieve"})

    def base_queryset(self) -> QuerySet:
        return selectors.workloads_with_queues()

    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        queryset = self.filter_queryset(self.get_queryset())
        ordered = queryset.with_queue_position().order_by(*SORTS["waiting-first"])  # type: ignore[attr-defined]  # a WorkloadQuerySet
        page = fill_estimated_positions(self.paginate_queryset(ordered) or [])
        rows = priority_rows(self.access, page, ahead_shown=AHEAD_IN_A_LIST)
        return self.get_paginated_response(PriorityRowSerializer(rows, many=True).data)

    def retrieve(self, request: Request, *args: object, **kwargs: object) -> Response:
        workload: Workload = self.get_object()  # 404 for another tenant's
        attach_queue_positions([workload])
        row = priority_rows(self.access, [workload], ahead_shown=AHEAD_FOR_ONE)[0]
        return Response(PriorityRowSerializer(row).data)
