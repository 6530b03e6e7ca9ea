"""The audit trail of policy changes, read-only."""

from __future__ import annotations

from django.db.models import QuerySet
from rest_framework import mixins

from core.api.views import ApiViewSet
from queues.api.serializers.audit import PolicyChangeSerializer
from queues.filtersets import PolicyChangeFilterSet
from queues.selectors import api as selectors


class PolicyChangeViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    """Who changed which policy when, through which surface. Tenants see the rows about their
    namespaces, their LocalQueues and the budgets they can see."""

    serializer_class = PolicyChangeSerializer
    filterset_class = PolicyChangeFilterSet
    ordering_fields = ["at", "object_type", "actor_name"]
    tenant_scoped = True

    def base_queryset(self) -> QuerySet:
        return selectors.policy_changes()
