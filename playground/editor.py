"""The scenario page's policy editor: one input per editable knob, turned into ``--set`` edits.

Pure functions over a validated engine ``Scenario``: ``editable_fields`` lists the knobs with
their current values (in the canonical forms the loader reads back), ``edits_from`` turns what
was submitted into edits for the fields that changed. Anything else can still be typed as a
free ``path=value`` line; both end in the same list the API takes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fairshare.durations import format_duration
from fairshare.policy import COHORT_DOMINANT_SHARES, IN_PASS_ACCOUNTINGS
from fairshare.quantities import format_quantity
from fairshare.simulation.scenario import Scenario
from fairshare.types import (
    ADMISSION_MODES,
    QUEUEING_STRATEGIES,
    RECLAIM_WITHIN_COHORT_POLICIES,
    WITHIN_CLUSTER_QUEUE_POLICIES,
    WITHIN_NAMESPACE_POLICIES,
)

NO_MODE = "null"  # the edit value that removes an admissionScope's mode

GROUPS = ("Fair sharing", "Clusters", "Cohorts", "ClusterQueues", "Namespaces", "LocalQueues", "Budgets")


@dataclass(frozen=True)
class EditableField:
    """One input: ``path`` is the ``--set`` path, ``initial`` the current value as text."""

    path: str
    group: str
    owner: str  # the object's name, shown as the row
    label: str  # the knob, shown as the column
    initial: str
    choices: tuple[tuple[str, str], ...] = field(default=())
    hint: str = ""


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _mode_choices() -> tuple[tuple[str, str], ...]:
    """The modes, and "not set": the pages call a ClusterQueue without a mode of its own (nor a
    cohort's above it) NoAdmissionFairSharing (default), so the editor names that too."""
    return (
        (NO_MODE, "not set (inherits; default NoAdmissionFairSharing)"),
        *tuple((mode, mode) for mode in ADMISSION_MODES),
    )


def editable_fields(scenario: Scenario) -> list[EditableField]:
    """Every knob the page offers, grouped, in a stable order."""
    fields: list[EditableField] = []
    policy = scenario.policy
    knobs = (
        (
            "usageHalfLifeTime",
            "half-life",
            format_duration(policy.usage_half_life_seconds),
            "decay of past usage, e.g. 30m",
        ),
        ("usageSamplingInterval", "sampling interval", format_duration(policy.usage_sampling_interval_seconds), ""),
        (
            "resetInactivityPeriod",
            "reset after inactivity",
            format_duration(policy.reset_inactivity_seconds),
            "0s: never",
        ),
        ("kValue", "kValue", _number(policy.k_value), "TimeAware: weight of history (0: plain weights)"),
        ("usageWindow.size", "window size", format_duration(policy.usage_window.size_seconds), "TimeAware"),
    )
    for key, label, initial, hint in knobs:
        fields.append(EditableField(f"policy.{key}", "Fair sharing", "policy", label, initial, hint=hint))
    fields.append(
        EditableField(
            "policy.usageWindow.type",
            "Fair sharing",
            "policy",
            "window type",
            policy.usage_window.type,
            choices=(("sliding", "sliding"), ("tumbling", "tumbling")),
        )
    )
    fields.append(
        EditableField(
            "policy.inPassAccounting",
            "Fair sharing",
            "policy",
            "in-pass accounting",
            policy.in_pass_accounting,
            choices=tuple((v, v) for v in IN_PASS_ACCOUNTINGS),
            hint="UsageBased: what an admission adds to its queue's score for the rest of the pass",
        )
    )
    fields.append(
        EditableField(
            "policy.cohortDominantShare",
            "Fair sharing",
            "policy",
            "cohort dominant share",
            policy.cohort_dominant_share,
            choices=tuple((v, v) for v in COHORT_DOMINANT_SHARES),
            hint="DominantResourceShare between ClusterQueues: Kueue's borrowing, or allocation",
        )
    )
    for resource in _resources(scenario):
        fields.append(
            EditableField(
                f"policy.resourceWeights.{resource}",
                "Fair sharing",
                "policy",
                f"weight of {resource}",
                _number(policy.resource_weight(resource)),
            )
        )
    for cohort in scenario.cohorts:
        base = f"cohorts.{cohort.name}"
        fields.append(EditableField(f"{base}.weight", "Cohorts", cohort.name, "weight", _number(cohort.weight)))
        fields.append(
            EditableField(
                f"{base}.admissionScope.admissionMode",
                "Cohorts",
                cohort.name,
                "admission mode",
                cohort.admission_mode or NO_MODE,
                choices=_mode_choices(),
            )
        )
        fields.extend(_quota_fields(base, "Cohorts", cohort.name, cohort.quotas, limits=cohort.parent is not None))
    for queue in scenario.cluster_queues:
        base = f"clusterQueues.{queue.name}"
        fields.append(EditableField(f"{base}.weight", "ClusterQueues", queue.name, "weight", _number(queue.weight)))
        fields.append(
            EditableField(
                f"{base}.admissionScope.admissionMode",
                "ClusterQueues",
                queue.name,
                "admission mode",
                queue.admission_mode or NO_MODE,
                choices=_mode_choices(),
            )
        )
        fields.append(
            EditableField(
                f"{base}.queueingStrategy",
                "ClusterQueues",
                queue.name,
                "queueing",
                queue.queueing_strategy,
                choices=tuple((s, s) for s in QUEUEING_STRATEGIES),
            )
        )
        fields.append(
            EditableField(
                f"{base}.preemption.withinClusterQueue",
                "ClusterQueues",
                queue.name,
                "preempt within",
                queue.preemption.within_cluster_queue,
                choices=tuple((p, p) for p in WITHIN_CLUSTER_QUEUE_POLICIES),
            )
        )
        fields.append(
            EditableField(
                f"{base}.preemption.reclaimWithinCohort",
                "ClusterQueues",
                queue.name,
                "reclaim in cohort",
                queue.preemption.reclaim_within_cohort,
                choices=tuple((p, p) for p in RECLAIM_WITHIN_COHORT_POLICIES),
            )
        )
        fields.extend(_quota_fields(base, "ClusterQueues", queue.name, queue.quotas, limits=queue.cohort is not None))
    for namespace in scenario.namespaces:
        fields.append(
            EditableField(
                f"namespaces.{namespace.name}.weight", "Namespaces", namespace.name, "weight", _number(namespace.weight)
            )
        )
        fields.append(
            EditableField(
                f"namespaces.{namespace.name}.preemption.withinNamespace",
                "Namespaces",
                namespace.name,
                "preempt for quota",
                namespace.within_namespace,
                choices=tuple((p, p) for p in WITHIN_NAMESPACE_POLICIES),
                hint="a workload over the namespace quota may evict the namespace's own work",
            )
        )
    for local_queue in scenario.local_queues:
        fields.append(
            EditableField(
                f"localQueues.{local_queue.key}.weight",
                "LocalQueues",
                local_queue.key,
                "weight",
                _number(local_queue.weight),
            )
        )
    for index, budget in enumerate(scenario.budgets):
        key = budget.name or str(index)
        fields.append(
            EditableField(
                f"budgets.{key}.allocatedHours",
                "Budgets",
                budget.label,
                "allocated hours",
                _number(budget.allocated_hours),
            )
        )
        fields.append(
            EditableField(
                f"budgets.{key}.action",
                "Budgets",
                budget.label,
                "when exhausted",
                budget.action,
                choices=(("Hold", "Hold"), ("HoldAndDrain", "HoldAndDrain")),
            )
        )
    # Last in the list (the page still shows them second, ``GROUPS``): a quota edit entered by
    # its flavor applies before the move renames that flavor.
    fields.extend(cluster_fields(scenario))
    return fields


def cluster_fields(scenario: Scenario) -> list[EditableField]:
    """The "Clusters" group, for a scenario that lists clusters (none otherwise):

    * each flavor's cluster (``resourceFlavors.<flavor>.cluster``): moves the flavor, with every
      quota on it, to another cluster;
    * each ClusterQueue quota entry's flavor (``clusterQueues.<cq>.quotas.<flavor>.flavor``):
      moves that queue's quota (every resource of the entry) to another flavor, e.g. to one of
      the new cluster; offered flavors are those the queue does not hold yet;
    * each cluster's outage window (``clusters.<name>.unavailable.from`` / ``.until``): no
      admission onto its flavors meanwhile.
    """
    if not scenario.clusters:
        return []
    fields: list[EditableField] = []
    cluster_choices = tuple((c.name, c.name) for c in scenario.clusters)
    for flavor in scenario.flavors:
        fields.append(
            EditableField(
                f"resourceFlavors.{flavor}.cluster",
                "Clusters",
                f"flavor {flavor}",
                "cluster",
                scenario.flavor_clusters.get(flavor, ""),
                choices=cluster_choices,
                hint="moves the flavor and every quota on it",
            )
        )
    for cluster in scenario.clusters:
        window = cluster.unavailable
        for index, (key, label) in enumerate((("from", "down from"), ("until", "down until"))):
            fields.append(
                EditableField(
                    f"clusters.{cluster.name}.unavailable.{key}",
                    "Clusters",
                    f"cluster {cluster.name}",
                    label,
                    "" if window is None else format_duration(window[index]),
                    hint="an outage in the replay, e.g. 2h to 6h from its start: nothing is admitted onto the "
                    "cluster's flavors meanwhile (set both)",
                )
            )
    for queue in scenario.cluster_queues:
        held = {fq.flavor for fq in queue.quotas}
        for flavor_quotas in queue.quotas:
            current = flavor_quotas.flavor
            targets = [current, *(f for f in scenario.flavors if f not in held)]
            fields.append(
                EditableField(
                    f"clusterQueues.{queue.name}.quotas.{current}.flavor",
                    "Clusters",
                    f"ClusterQueue {queue.name}",
                    f"quota of {current} ({', '.join(sorted(flavor_quotas.resources))}) on",
                    current,
                    choices=tuple((f, f"{f} ({scenario.flavor_clusters.get(f, '?')})") for f in targets),
                    hint="moves this quota entry, every resource of it, to another flavor (cluster in brackets)",
                )
            )
    return fields


def _quota_fields(base: str, group: str, owner: str, quotas, *, limits: bool) -> list[EditableField]:  # noqa: ANN001
    fields = []
    for flavor_quotas in quotas:
        for resource, quota in sorted(flavor_quotas.resources.items()):
            path = f"{base}.quotas.{flavor_quotas.flavor}.{resource}"
            where = f"{resource} ({flavor_quotas.flavor})"
            fields.append(
                EditableField(
                    f"{path}.nominal", group, owner, f"{where} nominal", format_quantity(quota.nominal, resource)
                )
            )
            if limits:
                borrowing = "" if quota.borrowing_limit is None else format_quantity(quota.borrowing_limit, resource)
                fields.append(
                    EditableField(
                        f"{path}.borrowingLimit",
                        group,
                        owner,
                        f"{where} borrowing limit",
                        borrowing,
                        hint="empty: unlimited",
                    )
                )
    return fields


def _resources(scenario: Scenario) -> list[str]:
    owners: list[Any] = [*scenario.cluster_queues, *scenario.cohorts]  # both have quotas
    found = {r for owner in owners for fq in owner.quotas for r in fq.resources}
    return sorted(found)


def edits_from(fields: list[EditableField], submitted: Mapping[str, str]) -> list[str]:
    """``path=value`` for every field whose submitted text differs from its current value.

    An emptied limit becomes ``null`` (no limit); an emptied other field is left as it was.
    """
    edits = []
    for spec in fields:
        if spec.path not in submitted:
            continue
        value = str(submitted[spec.path]).strip()
        if value == spec.initial:
            continue
        if not value:
            if spec.path.endswith(("borrowingLimit", "lendingLimit")):
                edits.append(f"{spec.path}=null")
            continue
        edits.append(f"{spec.path}={value}")
    return edits


def grouped(fields: list[EditableField]) -> list[tuple[str, list[tuple[str, list[EditableField]]]]]:
    """Fields as the page lays them out: group -> rows (one object) -> its inputs."""
    result = []
    for group in GROUPS:
        rows: dict[str, list[EditableField]] = {}
        for spec in fields:
            if spec.group == group:
                rows.setdefault(spec.owner, []).append(spec)
        if rows:
            result.append((group, list(rows.items())))
    return result
