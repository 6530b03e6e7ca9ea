"""Node paths: the nodes whose usage an admission from a LocalQueue counts in.

One rule for the path LocalQueue -> namespace -> ClusterQueue -> cohorts up to the root, used
by the simulator, the admission pass (entry penalties) and the usage sampler (admitted usage
per level), so a LocalQueue's decayed usage means the same thing in the live system, the
simulator and the playground. Node ids are ``types.node_id`` strings (``localQueue:ns/name``,
``namespace:ns``, ``clusterQueue:name``, ``cohort:name``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from fairshare.quota.scopes import cohort_chains, queue_chain
from fairshare.types import Snapshot, node_id

K = TypeVar("K")

# The kinds of ``node_id`` (and of the usage series' rows).
LOCAL_QUEUE, NAMESPACE, CLUSTER_QUEUE, COHORT = "localQueue", "namespace", "clusterQueue", "cohort"


def path_nodes(local_queue: K, namespace: K, cluster_queue: K, cohorts: Iterable[K]) -> tuple[tuple[str, K], ...]:
    """``(kind, key)`` of every node on a LocalQueue's path, nearest first: the LocalQueue, its
    namespace, its ClusterQueue and ``cohorts`` (the ClusterQueue's cohort and those above it,
    nearest first). Works on any keys: engine names, or database ids (the sampler's)."""
    return (
        (LOCAL_QUEUE, local_queue),
        (NAMESPACE, namespace),
        (CLUSTER_QUEUE, cluster_queue),
        *((COHORT, cohort) for cohort in cohorts),
    )


def node_path(local_queue: str, namespace: str, cluster_queue: str, cohorts: Iterable[str]) -> tuple[str, ...]:
    """The ``node_id`` of every node on a LocalQueue's path (see ``path_nodes``)."""
    return tuple(node_id(kind, name) for kind, name in path_nodes(local_queue, namespace, cluster_queue, cohorts))


def node_paths(snapshot: Snapshot) -> dict[str, tuple[str, ...]]:
    """Per LocalQueue key, the nodes whose usage an admission from it counts in: the LocalQueue,
    its namespace, its ClusterQueue and the ClusterQueue's cohorts up to the root."""
    cohorts = {c.name: c for c in snapshot.cohorts}
    chains = cohort_chains(cohorts)
    queues = {q.name: q for q in snapshot.cluster_queues}
    paths: dict[str, tuple[str, ...]] = {}
    for local in snapshot.local_queues:
        queue = queues.get(local.cluster_queue)
        paths[local.key] = node_path(
            local.key, local.namespace, local.cluster_queue, queue_chain(queue, chains) if queue else ()
        )
    return paths


def all_nodes(snapshot: Snapshot) -> list[str]:
    """Every node that has a usage state, sorted."""
    nodes = {nid for path in node_paths(snapshot).values() for nid in path}
    nodes |= {node_id("clusterQueue", q.name) for q in snapshot.cluster_queues}
    nodes |= {node_id("namespace", n.name) for n in snapshot.namespaces}
    nodes |= {node_id("cohort", c.name) for c in snapshot.cohorts}
    return sorted(nodes)
