"""What an edit changes, object by object: the list the run page shows and ``apply`` writes.

Edits are ``--set`` paths on a scenario document; rather than interpreting paths (names hold
dots and slashes, quotas are entered by flavor), the baseline and the edited document are both
validated by the engine's loader and the two ``Scenario`` objects are compared field by field.
What differs is classified by where it can become real:

* ``database``: weights, quotas and limits, admission modes, queueing strategies, preemption,
  stop policies, cohort membership, budget allocations and actions. ``apply`` writes these.
* ``environment``: the global fair-sharing knobs (half-life, sampling interval, resource
  weights, reset period, kValue, window) come from the environment at start-up; the playground
  shows the variable to set rather than pretending to apply them.
* ``simulation``: everything else (workloads, the clock, initial usage, objects added or
  removed): it shaped the what-if but is not policy.

Pure functions of engine objects: no Django, unit-tested on their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from core.fairsharing_config import ENV_KEYS
from fairshare.durations import format_duration
from fairshare.policy import FairSharingPolicy
from fairshare.quantities import format_quantity
from fairshare.simulation.scenario import BudgetSpec, Scenario
from fairshare.types import FlavorQuotas

DATABASE = "database"
ENVIRONMENT = "environment"
SIMULATION = "simulation"

KIND_LABELS = {
    "cohort": "Cohort",
    "clusterQueue": "ClusterQueue",
    "namespace": "Namespace",
    "localQueue": "LocalQueue",
    "budget": "Budget",
    "policy": "Fair sharing",
    "resourceFlavor": "ResourceFlavor",
    "cluster": "Cluster",
    "scenario": "Scenario",
}

# camelCase policy key -> environment variable (the inverse of the settings' table).
POLICY_ENV = {key: variable for variable, key in ENV_KEYS.items()}


@dataclass(frozen=True)
class PolicyDelta:
    """One field of one object that differs between the baseline and the edited scenario.

    ``before``/``after`` are JSON values as a person reads them (quantities in Kubernetes
    notation, durations as ``30m``); ``None`` on one side means the object exists only on the
    other.
    """

    target: str
    kind: str
    name: str
    field: str
    before: Any
    after: Any
    note: str = ""

    @property
    def label(self) -> str:
        kind = KIND_LABELS.get(self.kind, self.kind)
        return f"{kind} {self.name} {self.field}".replace("  ", " ").strip()

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "label": self.label}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PolicyDelta:
        return cls(**{key: data[key] for key in ("target", "kind", "name", "field", "before", "after", "note")})


# --- display forms ----------------------------------------------------------------------------


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def quotas_form(quotas: Iterable[FlavorQuotas]) -> dict[str, dict[str, dict[str, str]]]:
    """``{flavor: {resource: {nominal, borrowingLimit?, lendingLimit?}}}`` in quantities."""
    form: dict[str, dict[str, dict[str, str]]] = {}
    for flavor_quotas in quotas:
        resources: dict[str, dict[str, str]] = {}
        for resource, quota in sorted(flavor_quotas.resources.items()):
            entry = {"nominal": format_quantity(quota.nominal, resource)}
            if quota.borrowing_limit is not None:
                entry["borrowingLimit"] = format_quantity(quota.borrowing_limit, resource)
            if quota.lending_limit is not None:
                entry["lendingLimit"] = format_quantity(quota.lending_limit, resource)
            resources[resource] = entry
        form[flavor_quotas.flavor] = resources
    return form


def resource_list_form(amounts: Mapping[str, int]) -> dict[str, str]:
    return {resource: format_quantity(amount, resource) for resource, amount in sorted(amounts.items())}


def budget_key(budget: BudgetSpec, index: int) -> str:
    """Budgets are matched by name, or by position and target when unnamed."""
    return budget.name or f"#{index} {budget.target_kind} {budget.target}"


# --- the comparison --------------------------------------------------------------------------


def object_fields(kind: str, obj: Any) -> dict[str, Any]:
    """The policy fields of one engine object in display form, keyed as in scenario files."""
    if kind == "cohort":
        return {
            "parent": obj.parent,
            "weight": _number(obj.weight),
            "admissionMode": obj.admission_mode,
            "quotas": quotas_form(obj.quotas),
        }
    if kind == "clusterQueue":
        return {
            "cohort": obj.cohort,
            "weight": _number(obj.weight),
            "queueingStrategy": obj.queueing_strategy,
            "admissionMode": obj.admission_mode,
            "quotas": quotas_form(obj.quotas),
            "preemption.withinClusterQueue": obj.preemption.within_cluster_queue,
            "preemption.reclaimWithinCohort": obj.preemption.reclaim_within_cohort,
            "stopPolicy": obj.stop_policy,
        }
    if kind == "namespace":
        return {
            "weight": _number(obj.weight),
            "quota": resource_list_form(obj.quota),
            "preemption.withinNamespace": obj.within_namespace,
        }
    if kind == "localQueue":
        return {"clusterQueue": obj.cluster_queue, "weight": _number(obj.weight), "stopPolicy": obj.stop_policy}
    raise ValueError(kind)


BUDGET_DATABASE_FIELDS = ("allocatedHours", "action")


def budget_fields(budget: BudgetSpec) -> dict[str, Any]:
    return {
        "target": f"{budget.target_kind} {budget.target}",
        "kind": budget.kind,
        "resource": budget.resource,
        "flavor": budget.flavor,
        "allocatedHours": _number(budget.allocated_hours),
        "action": budget.action,
        "usedHours": _number(budget.used_hours),
    }


def _policy_fields(policy: FairSharingPolicy) -> dict[str, Any]:
    return policy.to_mapping()


def _compare_objects(kind: str, before: Mapping[str, Any], after: Mapping[str, Any], fields: Any) -> list[PolicyDelta]:
    deltas: list[PolicyDelta] = []
    for name in sorted(set(before) | set(after)):
        if name not in after:
            deltas.append(PolicyDelta(SIMULATION, kind, name, "", "exists", None, "removed in the simulation only"))
            continue
        if name not in before:
            deltas.append(PolicyDelta(SIMULATION, kind, name, "", None, "exists", "added in the simulation only"))
            continue
        old, new = fields(kind, before[name]), fields(kind, after[name])
        for field, value in new.items():
            if old[field] != value:
                deltas.append(PolicyDelta(DATABASE, kind, name, field, old[field], value))
    return deltas


def policy_deltas(baseline: Scenario, edited: Scenario) -> list[PolicyDelta]:
    """Every difference between two validated scenarios, policy first, then the rest."""
    deltas: list[PolicyDelta] = []
    for kind, attribute, key in (
        ("cohort", "cohorts", "name"),
        ("clusterQueue", "cluster_queues", "name"),
        ("namespace", "namespaces", "name"),
        ("localQueue", "local_queues", "key"),
    ):
        before = {getattr(obj, key): obj for obj in getattr(baseline, attribute)}
        after = {getattr(obj, key): obj for obj in getattr(edited, attribute)}
        deltas.extend(_compare_objects(kind, before, after, object_fields))
    deltas = [_with_cluster_moves(delta, baseline, edited) for delta in deltas]
    deltas.extend(_budget_deltas(baseline.budgets, edited.budgets))
    old_policy, new_policy = _policy_fields(baseline.policy), _policy_fields(edited.policy)
    for field, value in new_policy.items():
        if old_policy[field] != value:
            variable = POLICY_ENV.get(field, "")
            deltas.append(
                PolicyDelta(
                    ENVIRONMENT, "policy", "", field, old_policy[field], value, f"set {variable}" if variable else ""
                )
            )
    deltas.extend(_scenario_only_deltas(baseline, edited))
    deltas.extend(_cluster_deltas(baseline, edited))
    return deltas


def _resource_clusters(scenario: Scenario, quotas: Iterable[FlavorQuotas]) -> dict[str, list[str]]:
    """resource -> the clusters of the flavors a quota list holds it on (nominal above 0), in order."""
    found: dict[str, list[str]] = {}
    for flavor_quotas in quotas:
        cluster = scenario.flavor_clusters.get(flavor_quotas.flavor)
        for resource, quota in sorted(flavor_quotas.resources.items()):
            if cluster is not None and quota.nominal > 0 and cluster not in found.setdefault(resource, []):
                found[resource].append(cluster)
    return found


def _with_cluster_moves(delta: PolicyDelta, baseline: Scenario, edited: Scenario) -> PolicyDelta:
    """A quota change that moves a resource between clusters says so in its note
    (``nvidia.com/gpu: cluster old -> new``)."""
    if delta.field != "quotas" or delta.kind not in ("cohort", "clusterQueue") or not edited.clusters:
        return delta
    attribute = "cohorts" if delta.kind == "cohort" else "cluster_queues"
    before = next(o for o in getattr(baseline, attribute) if o.name == delta.name)
    after = next(o for o in getattr(edited, attribute) if o.name == delta.name)
    old, new = _resource_clusters(baseline, before.quotas), _resource_clusters(edited, after.quotas)
    moves = [
        f"{resource}: cluster {', '.join(old.get(resource, [])) or 'none'} -> {', '.join(new.get(resource, [])) or 'none'}"
        for resource in sorted(set(old) | set(new))
        if old.get(resource, []) != new.get(resource, [])
    ]
    return replace(delta, note="; ".join(moves)) if moves else delta


def _window_form(window: tuple[int, int] | None) -> str | None:
    return None if window is None else f"{format_duration(window[0])} to {format_duration(window[1])}"


def _cluster_deltas(baseline: Scenario, edited: Scenario) -> list[PolicyDelta]:
    """Flavors moved between clusters (``ResourceFlavor gpu-a100 cluster: old -> new``), clusters
    added or removed and outage windows: all only in the simulation (a flavor's cluster is
    changed on its admin page; an outage is a what-if, not policy)."""
    deltas: list[PolicyDelta] = []
    for flavor in edited.flavors:
        old, new = baseline.flavor_clusters.get(flavor), edited.flavor_clusters.get(flavor)
        if flavor in baseline.flavors and old != new:
            deltas.append(
                PolicyDelta(
                    SIMULATION, "resourceFlavor", flavor, "cluster", old, new, "a flavor's cluster is set in the admin"
                )
            )
    before = {c.name: c for c in baseline.clusters}
    after = {c.name: c for c in edited.clusters}
    for name in [*before, *(n for n in after if n not in before)]:
        if name not in after or name not in before:
            removed = name not in after
            deltas.append(
                PolicyDelta(
                    SIMULATION,
                    "cluster",
                    name,
                    "",
                    "exists" if removed else None,
                    None if removed else "exists",
                    "removed in the simulation only" if removed else "added in the simulation only",
                )
            )
        elif before[name].unavailable != after[name].unavailable:
            deltas.append(
                PolicyDelta(
                    SIMULATION,
                    "cluster",
                    name,
                    "unavailable",
                    _window_form(before[name].unavailable),
                    _window_form(after[name].unavailable),
                    "an outage in the replay: no admission onto its flavors meanwhile",
                )
            )
    return deltas


def _budget_deltas(before_list: tuple[BudgetSpec, ...], after_list: tuple[BudgetSpec, ...]) -> list[PolicyDelta]:
    before = {budget_key(b, i): b for i, b in enumerate(before_list)}
    after = {budget_key(b, i): b for i, b in enumerate(after_list)}
    deltas: list[PolicyDelta] = []
    for name in sorted(set(before) | set(after)):
        if name not in after or name not in before:
            removed = name not in after
            deltas.append(
                PolicyDelta(
                    SIMULATION,
                    "budget",
                    name,
                    "",
                    "exists" if removed else None,
                    None if removed else "exists",
                    "removed in the simulation only" if removed else "added in the simulation only",
                )
            )
            continue
        old, new = budget_fields(before[name]), budget_fields(after[name])
        for field, value in new.items():
            if old[field] == value:
                continue
            if field in BUDGET_DATABASE_FIELDS and before[name].name:
                deltas.append(PolicyDelta(DATABASE, "budget", name, field, old[field], value))
            else:
                note = (
                    "what was already used: part of the replay, not policy"
                    if field == "usedHours"
                    else "only allocation and action are applied; change the rest on the budget page"
                    if before[name].name
                    else "an unnamed budget cannot be matched to a stored one"
                )
                deltas.append(PolicyDelta(SIMULATION, "budget", name, field, old[field], value, note))
    return deltas


def _scenario_only_deltas(baseline: Scenario, edited: Scenario) -> list[PolicyDelta]:
    deltas: list[PolicyDelta] = []
    if baseline.flavors != edited.flavors:
        deltas.append(
            PolicyDelta(
                SIMULATION,
                "resourceFlavor",
                "",
                "",
                list(baseline.flavors),
                list(edited.flavors),
                "flavors are created in the admin",
            )
        )
    if baseline.clock != edited.clock:
        deltas.append(
            PolicyDelta(
                SIMULATION,
                "scenario",
                "",
                "clock",
                _clock_form(baseline),
                _clock_form(edited),
                "the simulated time span",
            )
        )
    if dict(baseline.initial_usage) != dict(edited.initial_usage):
        deltas.append(
            PolicyDelta(
                SIMULATION,
                "scenario",
                "",
                "initialUsage",
                _usage_form(baseline),
                _usage_form(edited),
                "the usage the replay starts from",
            )
        )
    if baseline.workloads != edited.workloads or baseline.generators != edited.generators:
        deltas.append(
            PolicyDelta(
                SIMULATION, "scenario", "", "workloads", _count(baseline), _count(edited), "the simulated demand"
            )
        )
    return deltas


def _clock_form(scenario: Scenario) -> dict[str, Any]:
    horizon = scenario.clock.horizon_seconds
    form: dict[str, Any] = {
        "horizon": None if horizon is None else format_duration(horizon),
        "tick": format_duration(scenario.clock.tick_seconds),
    }
    if scenario.clock.start is not None:
        form["start"] = scenario.clock.start.isoformat()
    if scenario.clock.time_zone is not None:
        form["timeZone"] = str(scenario.clock.time_zone)
    return form


def _usage_form(scenario: Scenario) -> dict[str, dict[str, str]]:
    return {key: resource_list_form(usage) for key, usage in sorted(scenario.initial_usage.items())}


def _count(scenario: Scenario) -> str:
    return f"{len(scenario.workloads) + sum(g.count for g in scenario.generators)} workloads"


# --- what to tell the admin ---------------------------------------------------------------------


def environment_lines(deltas: Iterable[PolicyDelta], edited_policy: FairSharingPolicy) -> list[str]:
    """``VARIABLE=value`` for each changed fair-sharing knob, in the settings' own syntax."""
    lines = []
    for delta in deltas:
        if delta.target != ENVIRONMENT:
            continue
        variable = POLICY_ENV.get(delta.field)
        if variable:
            lines.append(f"{variable}={_environment_value(delta.field, edited_policy)}")
    return lines


def _environment_value(field: str, policy: FairSharingPolicy) -> str:
    if field == "resourceWeights":
        return ",".join(f"{resource}={_number(weight)}" for resource, weight in sorted(policy.resource_weights.items()))
    if field == "usageWindow":
        return f"{format_duration(policy.usage_window.size_seconds)},{policy.usage_window.type}"
    if field == "kValue":
        return str(_number(policy.k_value))
    value = policy.to_mapping()[field]
    return str(value)


def by_target(deltas: Iterable[PolicyDelta]) -> dict[str, list[PolicyDelta]]:
    grouped: dict[str, list[PolicyDelta]] = {DATABASE: [], ENVIRONMENT: [], SIMULATION: []}
    for delta in deltas:
        grouped[delta.target].append(delta)
    return grouped
