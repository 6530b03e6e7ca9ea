"""Fair-share routes, registered on the project's one API router (``fairportal.urls``)."""

from rest_framework.routers import BaseRouter

from queues.api.views.audit import PolicyChangeViewSet
from queues.api.views.clusters import ClusterViewSet
from queues.api.views.observe import PriorityViewSet, ShareViewSet
from queues.api.views.policy import (
    ClusterQueueViewSet,
    CohortViewSet,
    LocalQueueViewSet,
    NamespaceViewSet,
    ResourceFlavorViewSet,
)
from queues.api.views.usage import UsageSampleViewSet
from queues.api.views.workloads import WorkloadViewSet


def register_routes(router: BaseRouter) -> None:
    router.register("clusters", ClusterViewSet, basename="cluster")
    router.register("resource-flavors", ResourceFlavorViewSet, basename="resource-flavor")
    router.register("cohorts", CohortViewSet, basename="cohort")
    router.register("cluster-queues", ClusterQueueViewSet, basename="cluster-queue")
    router.register("namespaces", NamespaceViewSet, basename="namespace")
    router.register("local-queues", LocalQueueViewSet, basename="local-queue")
    router.register("workloads", WorkloadViewSet, basename="workload")
    router.register("policy-changes", PolicyChangeViewSet, basename="policy-change")
    router.register("usage-samples", UsageSampleViewSet, basename="usage-sample")
    router.register("shares", ShareViewSet, basename="share")
    router.register("priority", PriorityViewSet, basename="priority")
