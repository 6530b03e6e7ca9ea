"""The usage time series, read-only."""

from __future__ import annotations

from django.db.models import QuerySet
from rest_framework import mixins

from core.api.views import ApiViewSet
from queues.api.serializers.usage import UsageSampleSerializer
from queues.filtersets import UsageSampleFilterSet
from queues.selectors import api as selectors


class UsageSampleViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    """One row per queue per sample (``kind`` + ``object_id`` name the queue: the ``id`` of a
    LocalQueue, namespace, ClusterQueue or cohort). Tenants see their namespaces' and
    LocalQueues' series and the cluster-wide ones; another tenant's is absent."""

    serializer_class = UsageSampleSerializer
    filterset_class = UsageSampleFilterSet
    ordering_fields = ["sampled_at"]
    tenant_scoped = True

    def base_queryset(self) -> QuerySet:
        return selectors.usage_samples()
