"""The sentences behind pending reasons and evictions: what a tenant reads when work waits."""

from __future__ import annotations

import math

from fairshare.quantities import format_quantity
from fairshare.quota.quota import FitFailure
from fairshare.types import USAGE_BASED


def insufficient_quota(cluster_queue: str, failure: FitFailure) -> str:
    sentence = _insufficient_quota(cluster_queue, failure)
    if failure.skipped and not failure.unavailable:
        names = ", ".join(failure.skipped[:5])
        sentence += (
            f"; flavor{'s' if len(failure.skipped) > 1 else ''} {names} unavailable now (cluster down or disabled)"
        )
    return sentence


def _insufficient_quota(cluster_queue: str, failure: FitFailure) -> str:
    resource = failure.resource
    if failure.unavailable:
        return (
            f"ClusterQueue {cluster_queue} holds {resource} only in flavors that are unavailable now "
            f"({', '.join(failure.skipped[:5]) or failure.flavor}: cluster down or disabled)"
        )
    if failure.flavor is None:
        return f"ClusterQueue {cluster_queue} has no quota for {resource} in any flavor"
    requested = format_quantity(failure.requested, resource)
    if failure.requested > failure.ceiling:
        return (
            f"requests {requested} {resource} but ClusterQueue {cluster_queue} can never get more than "
            f"{format_quantity(max(failure.ceiling, 0), resource)} in flavor {failure.flavor}"
        )
    return (
        f"insufficient quota for {resource} in flavor {failure.flavor} of ClusterQueue {cluster_queue}: "
        f"{format_quantity(failure.missing, resource)} more needed "
        f"(requests {requested}, {format_quantity(max(failure.available, 0), resource)} available)"
    )


def namespace_quota(namespace: str, resource: str, quota: int, used: int, requested: int) -> str:
    return (
        f"namespace {namespace} quota for {resource} is {format_quantity(quota, resource)}: "
        f"{format_quantity(used, resource)} in use, this workload needs {format_quantity(requested, resource)} "
        f"({format_quantity(used + requested - quota, resource)} over)"
    )


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
