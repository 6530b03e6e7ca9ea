"""django-filter filtersets of the fair-share objects, shared by the API lists and the UI lists.

Related objects are filtered by name (``?cluster_queue=gpu-training``), LocalQueues by their
``namespace/name`` key, as everywhere else in the project.
"""

from __future__ import annotations

import datetime
from typing import Any

import django_filters
from django import forms
from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet
from django_filters.fields import IsoDateTimeField

from core.models import PolicyChange, Surface
from queues.models import (
    AdmissionMode,
    Cluster,
    ClusterQueue,
    Cohort,
    LocalQueue,
    Namespace,
    ResourceFlavor,
    StopPolicy,
    UsageSample,
    Workload,
    WorkloadState,
)


class UtcIsoDateTimeField(IsoDateTimeField):
    """An ISO 8601 time, converted to UTC: Python accepts offsets up to +-23:59, PostgreSQL
    only up to +-15:59, so a far-off offset would otherwise fail in the database."""

    def to_python(self, value: Any) -> datetime.datetime | None:
        moment = super().to_python(value)
        if moment is None:
            return None
        try:
            return moment.astimezone(datetime.UTC)
        except OverflowError:
            raise ValidationError("the time is out of range", code="invalid") from None


class UtcIsoDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = UtcIsoDateTimeField


class IntegerFilter(django_filters.NumberFilter):
    """A whole number (priorities are integers): ``2.5`` is a 400, not a filter on 2.5."""

    field_class = forms.IntegerField


class NamedFilterSet(django_filters.FilterSet):
    """Policy objects are found by part of their name."""

    name = django_filters.CharFilter(lookup_expr="icontains", help_text="Part of the name")


class ResourceFlavorFilterSet(NamedFilterSet):
    cluster = django_filters.CharFilter(field_name="cluster__name", help_text="Name of the cluster")

    class Meta:
        model = ResourceFlavor
        fields = ["name", "cluster"]


class CohortFilterSet(NamedFilterSet):
    parent = django_filters.CharFilter(field_name="parent__name", help_text="Name of the parent cohort")
    root = django_filters.ChoiceFilter(
        choices=[("true", "true"), ("false", "false")],
        method="filter_root",
        help_text="true: only top-level cohorts; false: only nested ones",
    )
    admission_mode = django_filters.ChoiceFilter(choices=AdmissionMode.choices)

    class Meta:
        model = Cohort
        fields = ["name", "parent", "root", "admission_mode"]

    def filter_root(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(parent__isnull=value == "true")


class ClusterQueueFilterSet(NamedFilterSet):
    cohort = django_filters.CharFilter(field_name="cohort__name", help_text="Name of the cohort")
    admission_mode = django_filters.ChoiceFilter(choices=AdmissionMode.choices)
    stop_policy = django_filters.ChoiceFilter(choices=StopPolicy.choices)

    class Meta:
        model = ClusterQueue
        fields = ["name", "cohort", "admission_mode", "stop_policy"]


class NamespaceFilterSet(NamedFilterSet):
    class Meta:
        model = Namespace
        fields = ["name"]


class LocalQueueFilterSet(NamedFilterSet):
    namespace = django_filters.CharFilter(field_name="namespace__name", help_text="Name of the namespace")
    cluster_queue = django_filters.CharFilter(field_name="cluster_queue__name", help_text="Name of the ClusterQueue")
    stop_policy = django_filters.ChoiceFilter(choices=StopPolicy.choices)

    class Meta:
        model = LocalQueue
        fields = ["name", "namespace", "cluster_queue", "stop_policy"]


class WorkloadFilterSet(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains", help_text="Part of the name")
    # distinct=False: no multi-valued relation is involved, and django-filter's default DISTINCT
    # makes PostgreSQL sort and compare whole rows (5x slower at 100,000 workloads).
    state = django_filters.MultipleChoiceFilter(
        choices=WorkloadState.choices, distinct=False, help_text="Repeat for several"
    )
    namespace = django_filters.CharFilter(field_name="namespace__name", help_text="Name of the namespace")
    local_queue = django_filters.CharFilter(method="filter_local_queue", help_text="namespace/name")
    cluster_queue = django_filters.CharFilter(
        method="filter_cluster_queue", help_text="Name of the ClusterQueue it waits in or is admitted to"
    )
    pending_reason = django_filters.CharFilter(
        method="filter_pending_reason", help_text="Machine-readable code (pending workloads only)"
    )
    cluster = django_filters.CharFilter(
        method="filter_cluster", help_text="Name of the cluster it runs or ran on (or whose job it was imported from)"
    )
    priority_min = IntegerFilter(field_name="priority", lookup_expr="gte")
    priority_max = IntegerFilter(field_name="priority", lookup_expr="lte")
    queued_after = UtcIsoDateTimeFilter(field_name="queued_at", lookup_expr="gte")
    queued_before = UtcIsoDateTimeFilter(field_name="queued_at", lookup_expr="lt")

    class Meta:
        model = Workload
        fields = ["name", "state", "namespace", "local_queue", "cluster_queue", "pending_reason", "cluster"]

    def filter_cluster(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        """``?cluster=gpu``: admitted there (``Workload.cluster``), or imported from its jobs."""
        return queryset.filter(Q(cluster__name=value) | Q(cluster_job__cluster__name=value))

    def filter_pending_reason(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        """Only a pending workload has a reason (its stored one, ``WorkloadReason``)."""
        return queryset.filter(state=WorkloadState.PENDING, reason__code=value)

    def filter_local_queue(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        """``?local_queue=team-a/main``; a value without a slash matches nothing."""
        namespace, _, queue = value.partition("/")
        return queryset.filter(local_queue__namespace__name=namespace, local_queue__name=queue)

    def filter_cluster_queue(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(cluster_queue__name=value) | Q(local_queue__cluster_queue__name=value))


class PolicyChangeFilterSet(django_filters.FilterSet):
    object_type = django_filters.CharFilter(help_text="Model name, e.g. clusterqueue, localqueue, budget")
    object_id = django_filters.CharFilter()
    surface = django_filters.ChoiceFilter(choices=Surface.choices)
    action = django_filters.ChoiceFilter(choices=PolicyChange.Action.choices)
    actor = django_filters.CharFilter(field_name="actor_name", help_text="User name")
    after = UtcIsoDateTimeFilter(field_name="at", lookup_expr="gte")
    before = UtcIsoDateTimeFilter(field_name="at", lookup_expr="lt")

    class Meta:
        model = PolicyChange
        fields = ["object_type", "object_id", "surface", "action", "actor"]


class UsageSampleFilterSet(django_filters.FilterSet):
    """One queue's series: ``?local_queue=team-a/main``, ``?cluster_queue=gpu-training``, ...,
    or ``?kind=...&object_id=...``; ``after``/``before`` bound the time."""

    kind = django_filters.ChoiceFilter(choices=UsageSample.Kind.choices)
    object_id = django_filters.NumberFilter()
    resolution = django_filters.ChoiceFilter(choices=UsageSample.Resolution.choices)
    local_queue = django_filters.CharFilter(method="filter_local_queue", help_text="namespace/name")
    namespace = django_filters.CharFilter(method="filter_namespace", help_text="Name of the namespace")
    cluster_queue = django_filters.CharFilter(method="filter_cluster_queue", help_text="Name of the ClusterQueue")
    cohort = django_filters.CharFilter(method="filter_cohort", help_text="Name of the cohort")
    after = UtcIsoDateTimeFilter(field_name="sampled_at", lookup_expr="gte")
    before = UtcIsoDateTimeFilter(field_name="sampled_at", lookup_expr="lt")

    class Meta:
        model = UsageSample
        fields = ["kind", "object_id", "resolution", "local_queue", "namespace", "cluster_queue", "cohort"]

    @staticmethod
    def _of(queryset: QuerySet, kind: str, ids: QuerySet) -> QuerySet:
        return queryset.filter(kind=kind, object_id__in=ids.values("id"))

    def filter_local_queue(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        namespace, _, queue = value.partition("/")
        return self._of(
            queryset, UsageSample.Kind.LOCAL_QUEUE, LocalQueue.objects.filter(namespace__name=namespace, name=queue)
        )

    def filter_namespace(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return self._of(queryset, UsageSample.Kind.NAMESPACE, Namespace.objects.filter(name=value))

    def filter_cluster_queue(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return self._of(queryset, UsageSample.Kind.CLUSTER_QUEUE, ClusterQueue.objects.filter(name=value))

    def filter_cohort(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return self._of(queryset, UsageSample.Kind.COHORT, Cohort.objects.filter(name=value))


class ClusterFilterSet(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains", help_text="Part of the name")
    backend = django_filters.CharFilter(help_text="simulated, external or slurm (empty: the default cluster's)")
    enabled = django_filters.TypedChoiceFilter(
        choices=[("true", "true"), ("false", "false")],
        coerce=lambda value: value == "true",
        help_text="true or false (anything else is a 400 naming the parameter)",
    )

    class Meta:
        model = Cluster
        fields = ["name", "backend", "enabled"]
