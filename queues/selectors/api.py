"""Reads for the API lists: each one a fixed number of queries."""

from __future__ import annotations

from django.db.models import Count, Prefetch, Q, QuerySet

from core.models import PolicyChange
from queues.models import (
    Cluster,
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    LocalQueue,
    Namespace,
    ResourceFlavor,
    UsageSample,
    Workload,
    WorkloadState,
)

# -- API lists: related rows joined or prefetched, so a page costs the same at any size ------


def resource_flavors() -> QuerySet[ResourceFlavor]:
    return ResourceFlavor.objects.select_related("cluster")


def clusters() -> QuerySet[Cluster]:
    """Clusters with their health (1 query)."""
    return Cluster.objects.select_related("health")


def cohorts_with_quotas() -> QuerySet[Cohort]:
    """Cohorts with their parent and quota rows (2 queries)."""
    return Cohort.objects.select_related("parent").prefetch_related(
        Prefetch("quotas", queryset=CohortQuota.objects.select_related("flavor"))
    )


def cluster_queues_with_quotas() -> QuerySet[ClusterQueue]:
    """ClusterQueues with their cohort, quota rows in flavor order and workload counts (2 queries)."""
    return (
        ClusterQueue.objects.select_related("cohort")
        .prefetch_related(Prefetch("quotas", queryset=ClusterQueueQuota.objects.select_related("flavor")))
        .annotate(
            pending_count=Count(
                "local_queues__workloads", filter=Q(local_queues__workloads__state=WorkloadState.PENDING), distinct=True
            ),
            admitted_count=Count(
                "admitted_workloads", filter=Q(admitted_workloads__state=WorkloadState.ADMITTED), distinct=True
            ),
        )
        .order_by("name")  # an aggregation drops Meta.ordering; pages need a stable order
    )


def namespaces_with_quotas() -> QuerySet[Namespace]:
    """Namespaces with their hard quota rows (2 queries)."""
    return Namespace.objects.prefetch_related("quotas")


def local_queues_with_status() -> QuerySet[LocalQueue]:
    """LocalQueues with namespace, ClusterQueue and pending/admitted counts (1 query)."""
    return (
        LocalQueue.objects.select_related("namespace", "cluster_queue")
        .annotate(
            pending_count=Count("workloads", filter=Q(workloads__state=WorkloadState.PENDING)),
            admitted_count=Count("workloads", filter=Q(workloads__state=WorkloadState.ADMITTED)),
        )
        .order_by("namespace__name", "name")
    )


def workloads_with_queues() -> QuerySet[Workload]:
    """Workloads with their namespace, LocalQueue, ClusterQueues and stored reason (1 query);
    positions are attached per page (``attach_queue_positions``) or joined when they order the list."""
    return Workload.objects.with_reasons().select_related(
        "namespace", "local_queue__namespace", "local_queue__cluster_queue", "cluster_queue", "cluster"
    )


def policy_changes() -> QuerySet[PolicyChange]:
    return PolicyChange.objects.all()


def usage_samples() -> QuerySet[UsageSample]:
    """The usage series, oldest first (one query a page)."""
    return UsageSample.objects.order_by("sampled_at", "id")
