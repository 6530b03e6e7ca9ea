"""Usage bookkeeping around a snapshot: node paths, admitted usage, sampling, entry penalties.

The Celery usage sampler and the simulator both go through these, so a LocalQueue's decayed
usage means the same thing in the live system, the simulator and the playground. Node ids are
``types.node_id`` strings (``localQueue:ns/name``, ``namespace:ns``, ``clusterQueue:name``,
``cohort:name``).
"""

from __future__ import annotations

from collections.abc import Mapping

from fairshare.quota.scopes import cohort_chains, queue_chain
from fairshare.types import Plan, Snapshot, UsageState, node_id
from fairshare.usage.usage import add_penalty, sample


def node_paths(snapshot: Snapshot) -> dict[str, tuple[str, ...]]:
    """Per LocalQueue key, the nodes whose usage an admission from it counts in: the LocalQueue,
    its namespace, its ClusterQueue and the ClusterQueue's cohorts up to the root."""
    cohorts = {c.name: c for c in snapshot.cohorts}
    chains = cohort_chains(cohorts)
    queues = {q.name: q for q in snapshot.cluster_queues}
    paths: dict[str, tuple[str, ...]] = {}
    for local in snapshot.local_queues:
        queue = queues.get(local.cluster_queue)
        cohort_ids = tuple(node_id("cohort", c) for c in queue_chain(queue, chains)) if queue else ()
        paths[local.key] = (
            node_id("localQueue", local.key),
            node_id("namespace", local.namespace),
            node_id("clusterQueue", local.cluster_queue),
            *cohort_ids,
        )
    return paths


def all_nodes(snapshot: Snapshot) -> list[str]:
    """Every node that has a usage state, sorted."""
    nodes = {nid for path in node_paths(snapshot).values() for nid in path}
    nodes |= {node_id("clusterQueue", q.name) for q in snapshot.cluster_queues}
    nodes |= {node_id("namespace", n.name) for n in snapshot.namespaces}
    nodes |= {node_id("cohort", c.name) for c in snapshot.cohorts}
    return sorted(nodes)


def current_usage(snapshot: Snapshot) -> dict[str, dict[str, int]]:
    """Admitted requests (millis per resource) per node, as the sampler's ``current`` input."""
    paths = node_paths(snapshot)
    usage: dict[str, dict[str, int]] = {nid: {} for nid in all_nodes(snapshot)}
    for workload in snapshot.workloads:
        if not workload.admitted or workload.local_queue not in paths:
            continue
        path = paths[workload.local_queue]
        if workload.cluster_queue and workload.cluster_queue != path[2].split(":", 1)[1]:
            continue  # admitted to a ClusterQueue its LocalQueue no longer points at: counted nowhere
        for nid in path:
            per = usage[nid]
            for resource, amount in workload.requests.items():
                if amount:
                    per[resource] = per.get(resource, 0) + amount
    return usage


def sample_all(snapshot: Snapshot, now: float) -> dict[str, UsageState]:
    """Every node's usage state after a sample at ``now`` (decay from its own ``last_update``,
    penalties folded, reset after inactivity). Nodes without a state start at zero."""
    current = current_usage(snapshot)
    return {
        nid: sample(snapshot.usage.get(nid, UsageState()), current.get(nid, {}), now, snapshot.policy)
        for nid in all_nodes(snapshot)
    }


def with_penalties(usage: Mapping[str, UsageState], decided: Plan, snapshot: Snapshot) -> dict[str, UsageState]:
    """``usage`` with each admission's entry penalty added on the admitted workload's path."""
    paths = node_paths(snapshot)
    result = dict(usage)
    for admission in decided.admissions:
        for nid in paths.get(admission.local_queue, ()):
            result[nid] = add_penalty(result.get(nid, UsageState()), admission.penalty)
    return result
