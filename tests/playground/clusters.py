"""Stored clusters that match the presets, so a preset's edit can be applied to them."""

from __future__ import annotations

from decimal import Decimal

from fairshare.quantities import parse_millis
from queues.models import (
    AdmissionMode,
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    LocalQueue,
    Namespace,
    ResourceFlavor,
)


def volcano_cluster() -> dict[str, object]:
    """The volcano-16cpu preset as stored policy: cohort ``cluster`` owning 16 CPU, q1 and q2,
    namespaces ns1..ns4 each with a ``jobs`` LocalQueue."""
    default, _ = ResourceFlavor.objects.get_or_create(name="default")
    cohort = Cohort.objects.create(name="cluster", admission_mode=AdmissionMode.DOMINANT_RESOURCE_SHARE)
    CohortQuota.objects.create(cohort=cohort, flavor=default, resource="cpu", nominal=parse_millis("16"))
    objects: dict[str, object] = {"cohort": cohort}
    for name in ("q1", "q2"):
        queue = ClusterQueue.objects.create(name=name, cohort=cohort)
        ClusterQueueQuota.objects.create(cluster_queue=queue, flavor=default, resource="cpu", nominal=0)
        objects[name] = queue
    for index, name in enumerate(("ns1", "ns2", "ns3", "ns4")):
        namespace = Namespace.objects.create(name=name, weight=Decimal(1))
        objects[name] = namespace
        objects[f"{name}/jobs"] = LocalQueue.objects.create(
            namespace=namespace, name="jobs", cluster_queue=objects["q1" if index < 2 else "q2"]
        )
    return objects
