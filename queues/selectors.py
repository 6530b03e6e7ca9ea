"""Reads for views and the API: each one a fixed number of queries."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from queues.models import ClusterQueue, WorkloadState


def cluster_queues_with_counts() -> QuerySet[ClusterQueue]:
    """ClusterQueues with their cohort, LocalQueues and pending/admitted counts (3 queries)."""
    return (
        ClusterQueue.objects.select_related("cohort")
        .prefetch_related("local_queues__namespace", "quotas__flavor")
        .annotate(
            pending=Count("local_queues__workloads", filter=Q(local_queues__workloads__state=WorkloadState.PENDING)),
            admitted=Count("admitted_workloads", filter=Q(admitted_workloads__state=WorkloadState.ADMITTED)),
        )
        .order_by("cohort__name", "name")
    )
