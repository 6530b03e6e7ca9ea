"""The fair-share domain as Django models, one module per concept."""

from queues.models.admission_record import AdmissionRecord
from queues.models.admitted_usage import AdmittedUsage
from queues.models.backend import BackendHealth, ClusterJob, health_of
from queues.models.choices import (
    AdmissionMode,
    QueueingStrategy,
    ReclaimWithinCohort,
    StopLevel,
    StopPolicy,
    WithinClusterQueuePreemption,
    WithinNamespacePreemption,
    WorkloadState,
)
from queues.models.cluster import Cluster, default_cluster
from queues.models.cluster_queue import ClusterQueue
from queues.models.cohort import Cohort
from queues.models.flavor import ResourceFlavor
from queues.models.hold import QueueHold
from queues.models.idempotency import IdempotencyKey
from queues.models.local_queue import LocalQueue
from queues.models.namespace import Namespace, NamespaceQuota
from queues.models.pending_order import PendingOrder, PendingPosition
from queues.models.priority_class import WorkloadPriorityClass
from queues.models.quota import ClusterQueueQuota, CohortQuota
from queues.models.reason import WorkloadReason
from queues.models.usage_series import UsageSample
from queues.models.workload import Workload, WorkloadResource
from queues.models.workload_count import WorkloadCount, WorkloadCountChange

__all__ = [
    "AdmissionMode",
    "AdmissionRecord",
    "AdmittedUsage",
    "BackendHealth",
    "Cluster",
    "ClusterJob",
    "ClusterQueue",
    "ClusterQueueQuota",
    "Cohort",
    "CohortQuota",
    "IdempotencyKey",
    "LocalQueue",
    "Namespace",
    "NamespaceQuota",
    "PendingOrder",
    "PendingPosition",
    "QueueHold",
    "QueueingStrategy",
    "ReclaimWithinCohort",
    "ResourceFlavor",
    "StopLevel",
    "StopPolicy",
    "UsageSample",
    "WithinClusterQueuePreemption",
    "WithinNamespacePreemption",
    "Workload",
    "WorkloadCount",
    "WorkloadCountChange",
    "WorkloadPriorityClass",
    "WorkloadReason",
    "WorkloadResource",
    "WorkloadState",
    "default_cluster",
    "health_of",
]
