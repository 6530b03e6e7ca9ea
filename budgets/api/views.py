"""Budget endpoints. Budget events (the accounting issue) get their own viewset here."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view

from budgets.api.filtersets import BudgetFilterSet
from budgets.api.serializers import BudgetSerializer
from budgets.models import Budget
from queues.api.views.base import PolicyViewSet
from queues.tenancy import budget_visibility


@extend_schema_view(
    list=extend_schema(
        description="Tenants see the budgets that can hold their work: on their namespaces, their "
        "LocalQueues, or the ClusterQueues their LocalQueues feed. Only admins change budgets."
    )
)
class BudgetViewSet(PolicyViewSet):
    serializer_class = BudgetSerializer
    filterset_class = BudgetFilterSet
    ordering_fields = ["name", "allocated_hours", "created_at"]
    tenant_scoped = True

    def base_queryset(self) -> QuerySet:
        return Budget.objects.select_related("local_queue__namespace", "namespace", "cluster_queue", "flavor")

    def scope(self, queryset: QuerySet) -> QuerySet:
        if self.access.is_admin:
            return queryset
        return queryset.filter(budget_visibility(self.access))
