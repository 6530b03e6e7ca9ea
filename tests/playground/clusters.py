"""Stored clusters that match the presets, so a preset's edit can be applied to them."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

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


# The example of docs/playground.md ("Several clusters"), read from the page, so the page shows
# what the tests run: team-a holds 64 GPUs of the old cluster's a100, team-b 64 of the new
# cluster's h100; team-a runs two 64-GPU one-hour jobs from t=0, team-b one, in a 4 h simulation.
DOC = Path(__file__).resolve().parents[2] / "docs" / "playground.md"


def doc_block(marker: str) -> list[str]:
    """The lines of the block (fenced code or table) under ``<!-- example: marker -->``."""
    lines = DOC.read_text().splitlines()
    index = lines.index(f"<!-- example: {marker} -->") + 1
    if lines[index].startswith("```"):
        return lines[index + 1 : lines.index("```", index + 1)]
    block = []
    while index < len(lines) and lines[index].startswith("|"):
        block.append(lines[index])
        index += 1
    return block


def two_clusters_document() -> dict[str, Any]:
    """The two-cluster scenario of docs/playground.md (a fresh copy; no database)."""
    return yaml.safe_load("\n".join(doc_block("two-clusters scenario")))
