"""Budget endpoints: the policy (admins write) with its live status; events in ``events.py``."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from django.db.models import CharField, Exists, OuterRef, QuerySet, Value
from django.db.models.functions import Cast, Concat
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework.serializers import BaseSerializer

from budgets import accounting
from budgets.api.serializers import BudgetSerializer
from budgets.filtersets import BudgetFilterSet
from budgets.models import Budget
from budgets.services import delete_budget, request_reconcile
from core.api.views import PolicyViewSet
from core.models import Surface
from queues.models import QueueHold


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
        held = QueueHold.objects.filter(source=Concat(Value("budget:"), Cast(OuterRef("pk"), CharField())))
        return Budget.objects.select_related(
            "local_queue__namespace", "namespace", "cluster_queue", "flavor", "state"
        ).annotate(held=Exists(held))

    def lock_first(self, instance: Budget) -> Callable[[], None]:
        """A conditional write takes the budget's accounting lock before its row, in the order an
        accounting run takes them (``budgets.services.delete_budget``)."""
        return partial(accounting.lock_budget, instance.pk)

    def perform_create(self, serializer: BaseSerializer) -> None:
        super().perform_create(serializer)
        assert serializer.instance is not None  # saved just now
        request_reconcile(serializer.instance.pk)

    def perform_update(self, serializer: BaseSerializer) -> None:
        """A raised allocation lifts the hold right after the commit, not at the next beat."""
        super().perform_update(serializer)
        assert serializer.instance is not None  # saved just now
        request_reconcile(serializer.instance.pk)

    def perform_destroy(self, instance: Budget) -> None:
        """Under the budget's lock, like an accounting run (``budgets.services.delete_budget``)."""
        delete_budget(instance, actor=self.request.user, surface=Surface.API)
