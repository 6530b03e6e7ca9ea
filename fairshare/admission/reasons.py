"""The sentences behind pending reasons and evictions: what a tenant reads when work waits."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from fairshare.quantities import format_quantity
from fairshare.quota.quota import FitFailure
from fairshare.types import USAGE_BASED, Shortage


def insufficient_quota(cluster_queue: str, failure: FitFailure) -> str:
    """Every short resource with its amounts, the dominant one first (``FitFailure.shortages``).

    One shortage reads as it always did; each further one follows as "; also ..." in the same
    form, so the sentence starts with what matters most and hides nothing::

        insufficient quota for nvidia.com/gpu in flavor a100 of ClusterQueue gpu: 8 more needed
        (requests 8, 0 available); also insufficient quota for memory in flavor a100 of
        ClusterQueue gpu: 64Gi more needed (requests 384Gi, 320Gi available)

    Flavors passed over because their cluster is down or disabled are named after them; a
    request whose every flavor is unavailable says so instead. A request bound to one cluster
    (its job is there) names that cluster and the other clusters' flavors it may not use; one
    whose resource is held only in such flavors says that alone::

        bound to cluster slurm-a (its job was submitted there), but ClusterQueue mixed holds cpu
        only in flavors of other clusters (b-cpu)

    Flavor and cluster names are the site's (a ClusterQueue's own flavors), never a tenant's.
    """
    if failure.foreign_only:
        return (
            f"bound to cluster {failure.bound} (its job was submitted there), but ClusterQueue {cluster_queue} "
            f"holds {failure.resource} only in flavors of other clusters ({_names(failure.foreign)})"
        )
    if failure.unavailable:
        sentence = (
            f"ClusterQueue {cluster_queue} holds {failure.resource} only in flavors that are unavailable now "
            f"({', '.join(failure.skipped[:5]) or failure.flavor}: cluster down or disabled)"
        )
    else:
        sentence = "; also ".join(shortage_clause(cluster_queue, shortage) for shortage in failure.shortages)
        if failure.skipped:
            names = ", ".join(failure.skipped[:5])
            sentence += (
                f"; flavor{'s' if len(failure.skipped) > 1 else ''} {names} unavailable now (cluster down or disabled)"
            )
    if failure.bound:
        sentence += (
            f"; bound to cluster {failure.bound} (its job was submitted there): "
            f"flavor{'s' if len(failure.foreign) > 1 else ''} {_names(failure.foreign)} of other clusters not tried"
        )
    return sentence


def _names(flavors: tuple[str, ...]) -> str:
    """At most five flavor names, in queue order, then how many more."""
    shown = ", ".join(flavors[:5])
    return shown + (f" and {len(flavors) - 5} more" if len(flavors) > 5 else "")


def shortage_clause(cluster_queue: str, shortage: Shortage) -> str:
    """One short resource: no quota at all, more than the queue could ever get, or how much more."""
    resource = shortage.resource
    if shortage.flavor is None:
        return f"ClusterQueue {cluster_queue} has no quota for {resource} in any flavor"
    requested = format_quantity(shortage.requested, resource)
    if shortage.requested > shortage.ceiling:
        return (
            f"requests {requested} {resource} but ClusterQueue {cluster_queue} can never get more than "
            f"{format_quantity(max(shortage.ceiling, 0), resource)} in flavor {shortage.flavor}"
        )
    return (
        f"insufficient quota for {resource} in flavor {shortage.flavor} of ClusterQueue {cluster_queue}: "
        f"{format_quantity(shortage.missing, resource)} more needed "
        f"(requests {requested}, {format_quantity(max(shortage.available, 0), resource)} available)"
    )


def shortage_json(shortage: Shortage) -> dict[str, Any]:
    """A shortage as the simulator's results and scenario tools write it (camelCase, quantities
    in Kubernetes notation, as the sentence quotes them)."""
    resource = shortage.resource
    return {
        "resource": resource,
        "flavor": shortage.flavor,
        "requested": format_quantity(shortage.requested, resource),
        "available": format_quantity(max(shortage.available, 0), resource),
        "missing": format_quantity(shortage.missing, resource),
        "ceiling": format_quantity(max(shortage.ceiling, 0), resource),
        "neverFits": shortage.never_fits,
    }


def namespace_quota(namespace: str, resource: str, quota: int, used: int, requested: int) -> str:
    return (
        f"namespace {namespace} quota for {resource} is {format_quantity(quota, resource)}: "
        f"{format_quantity(used, resource)} in use, this workload needs {format_quantity(requested, resource)} "
        f"({format_quantity(used + requested - quota, resource)} over)"
    )


def namespace_quotas(namespace: str, over: list[tuple[str, int, int, int]]) -> str:
    """Every resource over the namespace's hard quota, ``(resource, quota, used, requested)``,
    the one furthest over (as a fraction of the request, then by name) first, joined like
    ``insufficient_quota``."""
    ordered = sorted(over, key=lambda row: (-Fraction(row[2] + row[3] - row[1], max(row[3], 1)), row[0]))
    return "; also ".join(namespace_quota(namespace, *row) for row in ordered)


def queue_stopped(kind: str, name: str, policy: str) -> str:
    return f"{kind} {name} is stopped (stopPolicy {policy}): no new admissions"


def budget_held(kind: str, name: str, message: str) -> str:
    return message or f"the budget of {kind} {name} is exhausted"


def blocked_by_head(cluster_queue: str, head: str, head_code: str) -> str:
    return (
        f"ClusterQueue {cluster_queue} is StrictFIFO and its head {head} cannot be admitted ({head_code}); "
        f"nothing behind it is tried until it is"
    )


def format_score(mode: str, score: float) -> str:
    """Scores as people read them: usage scores in base units, shares as plain numbers."""
    if math.isinf(score):
        return "inf (weight 0)"
    value = score / 1000 if mode == USAGE_BASED else score
    return f"{value:.4g}"


def waiting_for_fair_share(kind: str, ahead: str, ahead_score: str, own: str, own_score: str, shortage: str) -> str:
    return (
        f"{kind} {ahead} was ahead in fair-share order (score {ahead_score}; {own} has {own_score}) "
        f"and was admitted first; now {shortage}"
    )


def preempted(preemptor: str, rule: str, priority_class: str = "", priority: int = 0) -> str:
    """Names the preemptor's priority class when it has one: priority is policy, so the reader
    sees which class outranked them."""
    if priority_class:
        return f"preempted by {preemptor} (priority class {priority_class}, priority {priority}) {rule}"
    return f"preempted by {preemptor} {rule}"


def waiting_behind(cluster_queue: str, explained: int, head: str, head_message: str) -> str:
    """The shared reason of the quota-waiting workloads after the first ``explained`` of a
    ClusterQueue: it names no figure of its own, so it stays the same from pass to pass while the
    workload stays that far back (the head's reason, quoted, is the queue's current state)."""
    return (
        f"waiting behind the first {explained} workloads of ClusterQueue {cluster_queue}, which are explained "
        f"one by one; the first of its workloads waiting for the queue's quota, {head}: {head_message}"
    )
