"""Resource flavors, cohorts, ClusterQueues, namespaces and LocalQueues."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework.exceptions import PermissionDenied
from rest_framework.serializers import BaseSerializer

from core.api.views import PolicyViewSet as BasePolicyViewSet
from core.models import Surface
from queues.access import EDITOR_LOCAL_QUEUE_FIELDS
from queues.api.serializers.policy import (
    ClusterQueueSerializer,
    CohortSerializer,
    LocalQueueSerializer,
    NamespaceSerializer,
    ResourceFlavorSerializer,
)
from queues.filtersets import (
    ClusterQueueFilterSet,
    CohortFilterSet,
    LocalQueueFilterSet,
    NamespaceFilterSet,
    ResourceFlavorFilterSet,
)
from queues.selectors import api as selectors
from queues.services.policy import delete_policy_object

CLUSTER_WIDE = "Cluster-wide policy: every tenant reads it, only admins change it."
TENANT_SCOPED = "Tenants see only their own namespaces'; another tenant's is a 404."


class PolicyViewSet(BasePolicyViewSet):
    """Deletes through ``delete_policy_object``, as the dashboard's delete pages: refused (409,
    code ``protected``, naming what depends, admitted work first) while anything refers to the object."""

    def perform_destroy(self, instance: Any) -> None:
        delete_policy_object(instance, actor=self.request.user, surface=Surface.API)


@extend_schema_view(list=extend_schema(description=CLUSTER_WIDE))
class ResourceFlavorViewSet(PolicyViewSet):
    serializer_class = ResourceFlavorSerializer
    filterset_class = ResourceFlavorFilterSet
    ordering_fields = ["name", "created_at"]

    def base_queryset(self) -> QuerySet:
        return selectors.resource_flavors()


@extend_schema_view(list=extend_schema(description=CLUSTER_WIDE))
class CohortViewSet(PolicyViewSet):
    serializer_class = CohortSerializer
    filterset_class = CohortFilterSet
    ordering_fields = ["name", "weight", "created_at"]

    def base_queryset(self) -> QuerySet:
        return selectors.cohorts_with_quotas()


@extend_schema_view(list=extend_schema(description=CLUSTER_WIDE))
class ClusterQueueViewSet(PolicyViewSet):
    serializer_class = ClusterQueueSerializer
    filterset_class = ClusterQueueFilterSet
    ordering_fields = ["name", "weight", "created_at", "pending_count", "admitted_count"]

    def base_queryset(self) -> QuerySet:
        return selectors.cluster_queues_with_quotas()


@extend_schema_view(list=extend_schema(description=f"{TENANT_SCOPED} Admins change them."))
class NamespaceViewSet(PolicyViewSet):
    serializer_class = NamespaceSerializer
    filterset_class = NamespaceFilterSet
    ordering_fields = ["name", "weight", "created_at"]
    tenant_scoped = True

    def base_queryset(self) -> QuerySet:
        return selectors.namespaces_with_quotas()


@extend_schema_view(
    list=extend_schema(description=TENANT_SCOPED),
    partial_update=extend_schema(
        description="Admins change any field. Editors of the namespace change only "
        f"{', '.join(sorted(EDITOR_LOCAL_QUEUE_FIELDS))}; any other changed field is a 403 naming it."
    ),
)
class LocalQueueViewSet(PolicyViewSet):
    serializer_class = LocalQueueSerializer
    filterset_class = LocalQueueFilterSet
    ordering_fields = ["name", "namespace__name", "weight", "created_at", "pending_count"]
    tenant_scoped = True
    tenant_write_actions = frozenset({"update", "partial_update"})

    def base_queryset(self) -> QuerySet:
        return selectors.local_queues_with_status()

    def perform_update(self, serializer: BaseSerializer) -> None:
        if not self.access.is_admin:
            self._check_editor_fields(serializer)
        super().perform_update(serializer)

    def _check_editor_fields(self, serializer: BaseSerializer) -> None:
        """Editors may send the whole object back (PUT) but change only their fields."""
        instance = serializer.instance
        changed = {name for name, value in serializer.validated_data.items() if getattr(instance, name) != value}
        refused = sorted(changed - EDITOR_LOCAL_QUEUE_FIELDS)
        if refused:
            raise PermissionDenied(
                f"editors may change only {', '.join(sorted(EDITOR_LOCAL_QUEUE_FIELDS))} of a LocalQueue; "
                f"ask an admin to change {', '.join(refused)}"
            )
