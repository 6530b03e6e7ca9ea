"""Budget events (thresholds crossed, exhaustion, holds, renewals) for automation."""

from __future__ import annotations

import django_filters
from django.db.models import QuerySet
from rest_framework import mixins, serializers

from budgets.models import BudgetEvent
from core.api.views import ApiViewSet
from queues.filtersets import UtcIsoDateTimeFilter


class BudgetEventSerializer(serializers.ModelSerializer):
    budget = serializers.CharField(source="budget.name", read_only=True)

    class Meta:
        model = BudgetEvent
        fields = ["id", "budget", "kind", "at", "period_start", "threshold", "used_hours", "allocated_hours", "message"]
        read_only_fields = fields


class BudgetEventFilterSet(django_filters.FilterSet):
    budget = django_filters.CharFilter(field_name="budget__name")
    kind = django_filters.ChoiceFilter(choices=BudgetEvent.Kind.choices)
    since = UtcIsoDateTimeFilter(
        field_name="at", lookup_expr="gte", help_text="ISO 8601 time, e.g. 2026-11-01T00:00:00Z"
    )

    class Meta:
        model = BudgetEvent
        fields = ["budget", "kind", "since"]


class BudgetEventViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    """Newest first. Tenants see the events of the budgets they can see (``GET /budgets/``)."""

    serializer_class = BudgetEventSerializer
    filterset_class = BudgetEventFilterSet
    ordering_fields = ["at"]
    tenant_scoped = True

    def base_queryset(self) -> QuerySet:
        return BudgetEvent.objects.select_related("budget").order_by("-at", "-id")
