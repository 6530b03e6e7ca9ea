"""The issue's 8-GPU job on a real database: a100 with 8 GPUs and 640Gi, a running job holding
all 8 GPUs and 320Gi, and a pending job asking 8 GPUs and 384Gi (GPUs at 0 available, memory
64Gi short). Built through the models and the submission service, ranked by a real pass."""

from __future__ import annotations

from dataclasses import dataclass

from fairshare.quantities import parse_millis
from queues.admission import passes
from queues.models import (
    AdmissionMode,
    ClusterQueue,
    ClusterQueueQuota,
    LocalQueue,
    Namespace,
    ResourceFlavor,
    Workload,
    WorkloadState,
)
from queues.services import submit_workload

GPU = "nvidia.com/gpu"
EXPECTED_MESSAGE = (
    f"insufficient quota for {GPU} in flavor a100 of ClusterQueue gpu-training: 8 more needed "
    "(requests 8, 0 available); also insufficient quota for memory in flavor a100 of ClusterQueue "
    "gpu-training: 64Gi more needed (requests 384Gi, 320Gi available)"
)


@dataclass
class GpuCluster:
    cluster_queue: ClusterQueue
    local_queue: LocalQueue
    running: Workload
    waiting: Workload


def build_gpu_cluster() -> GpuCluster:
    flavor = ResourceFlavor.objects.get_or_create(name="a100")[0]
    cq = ClusterQueue.objects.create(name="gpu-training", admission_mode=AdmissionMode.NO_FAIR_SHARING)
    for resource, nominal in ((GPU, "8"), ("memory", "640Gi")):
        ClusterQueueQuota.objects.create(
            cluster_queue=cq, flavor=flavor, resource=resource, nominal=parse_millis(nominal)
        )
    namespace = Namespace.objects.get_or_create(name="team-a")[0]
    lq = LocalQueue.objects.create(namespace=namespace, name="training", cluster_queue=cq)
    running = _submit(lq, "running", "320Gi")
    passes.run_all_admission_passes()
    running.refresh_from_db()
    assert running.state == WorkloadState.ADMITTED
    waiting = _submit(lq, "train-8gpu", "384Gi")
    passes.run_all_admission_passes()
    waiting.refresh_from_db()
    assert waiting.state == WorkloadState.PENDING
    return GpuCluster(cq, lq, running, waiting)


def _submit(lq: LocalQueue, name: str, memory: str) -> Workload:
    return submit_workload(
        local_queue=lq,
        name=name,
        pod_sets=[{"count": 1, "requests": {GPU: "8", "memory": memory}}],
        duration_seconds=3600,
        request_pass=False,
    )
