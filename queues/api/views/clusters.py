"""``/api/v1/clusters/``: the clusters behind the admission pass. Admins write (audited, through
the policy service); tenants list names, health and their own figures only. Every answer carries
the per-cluster figures of ``queues.selectors.clusters`` (the dashboard's), computed once per
request: a list costs the page's queries plus a fixed 11."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema, extend_schema_view
from rest_framework.serializers import BaseSerializer

from queues.api.serializers.clusters import ClusterSerializer, ClusterSummarySerializer
from queues.api.views.policy import PolicyViewSet
from queues.filtersets import ClusterFilterSet
from queues.selectors import api as selectors
from queues.selectors.clusters import ClusterFigures, cluster_figures

_EITHER = PolymorphicProxySerializer(
    component_name="ClusterAsSeen",
    serializers=[ClusterSerializer, ClusterSummarySerializer],
    resource_type_field_name=None,
)


@extend_schema_view(
    list=extend_schema(
        description="Every user reads names and health; only admins see and change connections.",
        responses=_EITHER,
    ),
    retrieve=extend_schema(responses=_EITHER),
)
class ClusterViewSet(PolicyViewSet):
    serializer_class = ClusterSerializer
    filterset_class = ClusterFilterSet
    ordering_fields = ["name", "created_at"]

    def base_queryset(self) -> QuerySet:
        return selectors.clusters()

    def get_serializer_class(self) -> type[BaseSerializer]:
        if getattr(self, "swagger_fake_view", False) or self.access.is_admin:
            return ClusterSerializer
        return ClusterSummarySerializer

    def get_serializer_context(self) -> dict[str, Any]:
        return {**super().get_serializer_context(), "figures": self._figures}

    def _figures(self) -> dict[int, ClusterFigures]:
        """Every cluster's figures as this user may see them, once per request (after a write)."""
        cached: dict[int, ClusterFigures] | None = getattr(self, "_figures_cache", None)
        if cached is None:
            cached = self._figures_cache = {f.id: f for f in cluster_figures(self.access)}
        return cached
