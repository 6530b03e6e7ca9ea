"""Budget filters, shared by the API list and (later) the budgets pages."""

from __future__ import annotations

import django_filters
from django.db.models import Q, QuerySet

from budgets.models import Budget


class BudgetFilterSet(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains", help_text="Part of the name")
    kind = django_filters.ChoiceFilter(choices=Budget.Kind.choices)
    action = django_filters.ChoiceFilter(choices=Budget.Action.choices)
    namespace = django_filters.CharFilter(
        method="filter_namespace", help_text="Budgets of the namespace or of its LocalQueues"
    )
    local_queue = django_filters.CharFilter(method="filter_local_queue", help_text="namespace/name")
    cluster_queue = django_filters.CharFilter(field_name="cluster_queue__name")

    class Meta:
        model = Budget
        fields = ["name", "kind", "action", "namespace", "local_queue", "cluster_queue"]

    def filter_namespace(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(namespace__name=value) | Q(local_queue__namespace__name=value))

    def filter_local_queue(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        namespace, _, queue = value.partition("/")
        return queryset.filter(local_queue__namespace__name=namespace, local_queue__name=queue)
