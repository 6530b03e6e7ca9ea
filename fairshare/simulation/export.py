"""Engine types -> scenario document entries: the other direction of ``scenario.parse_scenario``.

Used by fairportal's live export (its rows become engine types in one bridge, then a document
here). Amounts are written as Kubernetes quantities, weights as numbers (whole ones as ints);
quota limits only where the owner has a parent to borrow from or lend to, as the loader
accepts them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fairshare.quantities import format_quantity
from fairshare.types import PREEMPT_NEVER, ClusterQueue, Cohort, FlavorQuotas, LocalQueue, Namespace


def number(value: float) -> int | float:
    """A weight as a scenario writes it: ``2`` rather than ``2.0``."""
    number = float(value)
    return int(number) if number.is_integer() else number


def resources(amounts: Mapping[str, float]) -> dict[str, str]:
    """Millis (floats for decayed usage) as quantities, by resource, dropping zeros."""
    return {
        resource: format_quantity(round(float(amount)), resource)
        for resource, amount in sorted(amounts.items())
        if round(float(amount)) > 0
    }


def quotas(flavors: tuple[FlavorQuotas, ...], *, limits: bool) -> list[dict[str, Any]]:
    """``quotas`` entries, flavors in their order; borrowing and lending limits with ``limits``."""
    result = []
    for flavor in flavors:
        by_resource: dict[str, Any] = {}
        for resource, quota in flavor.resources.items():
            entry: dict[str, Any] = {"nominal": format_quantity(quota.nominal, resource)}
            if limits and quota.borrowing_limit is not None:
                entry["borrowingLimit"] = format_quantity(quota.borrowing_limit, resource)
            if limits and quota.lending_limit is not None:
                entry["lendingLimit"] = format_quantity(quota.lending_limit, resource)
            by_resource[resource] = entry
        result.append({"flavor": flavor.flavor, "resources": by_resource})
    return result


def cohort(spec: Cohort) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": spec.name, "weight": number(spec.weight)}
    if spec.parent is not None:
        entry["parent"] = spec.parent
    if spec.admission_mode:
        entry["admissionScope"] = {"admissionMode": spec.admission_mode}
    if spec.quotas:
        entry["quotas"] = quotas(spec.quotas, limits=spec.parent is not None)
    return entry


def cluster_queue(spec: ClusterQueue) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": spec.name}
    if spec.cohort is not None:
        entry["cohort"] = spec.cohort
    entry["weight"] = number(spec.weight)
    entry["queueingStrategy"] = spec.queueing_strategy
    if spec.admission_mode:
        entry["admissionScope"] = {"admissionMode": spec.admission_mode}
    entry["quotas"] = quotas(spec.quotas, limits=spec.cohort is not None)
    entry["preemption"] = {
        "withinClusterQueue": spec.preemption.within_cluster_queue,
        "reclaimWithinCohort": spec.preemption.reclaim_within_cohort,
    }
    entry["stopPolicy"] = spec.stop_policy
    return entry


def namespace(spec: Namespace) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": spec.name, "weight": number(spec.weight)}
    if spec.quota:
        entry["quota"] = {
            resource: format_quantity(amount, resource) for resource, amount in sorted(spec.quota.items())
        }
    if spec.within_namespace != PREEMPT_NEVER:
        entry["preemption"] = {"withinNamespace": spec.within_namespace}
    return entry


def local_queue(spec: LocalQueue, initial_usage: Mapping[str, float] | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": spec.key,
        "clusterQueue": spec.cluster_queue,
        "weight": number(spec.weight),
        "stopPolicy": spec.stop_policy,
    }
    usage = resources(initial_usage or {})
    if usage:
        entry["initialUsage"] = usage
    return entry
