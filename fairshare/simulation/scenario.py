"""Scenario files (YAML or JSON): one validated description of a cluster and its workload.

The format is a stable contract (``fairshare/README.md``, "Simulator"): Kueue-like camelCase names,
durations such as ``90s``/``5m``/``2h``/``7d``, Kubernetes quantities. Every problem is a
``ValidationError`` naming the field path, e.g.
``clusterQueues[1].quotas[0].resources.cpu.nominal: must not be negative, got '-1'``.

``apply_set`` edits the raw document for what-if runs (``--set localQueues.team-a/main.weight=3``)
before validation, so an edit is checked exactly like the file itself.

Choices the contract leaves open:

* Namespaces named by a LocalQueue but not listed get weight 1 and no quota.
* Cohorts must be listed (a ClusterQueue naming an unknown cohort is an error).
* ``createdAt`` (the queue timestamp) defaults to ``submitAt``; ``submitAt`` defaults to 0s.
* A workload without ``duration`` runs until the end of the simulation. ``maxRuntime`` cuts its
  run (as the live simulated cluster ends a workload at its maximum runtime); a budget with
  ``safeAdmission: true`` admits it only if that worst case fits (default false: not applied).
* Clusters (optional, ``clusters``): when listed, every flavor names its cluster
  (``resourceFlavors[i].cluster``) and the simulator's summary gains a per-cluster breakdown;
  a cluster's ``unavailable: {from, until}`` window keeps new admissions off its flavors then.
* Generators: arrivals start at ``start`` (default 0s) and are separated by exponential gaps of
  mean ``interarrival``, rounded to whole seconds; names are ``<name>-<n>`` (``name`` defaults
  to ``<localQueue>-gen<index>``).
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

import yaml

from fairshare import safe_yaml
from fairshare.durations import parse_duration
from fairshare.errors import ValidationError
from fairshare.numbers import parse_number
from fairshare.policy import FairSharingPolicy
from fairshare.quantities import parse_millis, parse_resource_list, validate_resource_name
from fairshare.quota.quota import resource_groups
from fairshare.quota.scopes import cohort_chains
from fairshare.simulation.calendar import MAX_RENEWAL_DAYS, parse_moment, parse_time_zone
from fairshare.types import (
    ADMISSION_MODES,
    PREEMPT_NEVER,
    QUEUEING_STRATEGIES,
    RECLAIM_WITHIN_COHORT_POLICIES,
    STOP_HOLD,
    STOP_POLICIES,
    WITHIN_CLUSTER_QUEUE_POLICIES,
    WITHIN_NAMESPACE_POLICIES,
    ClusterQueue,
    Cohort,
    FlavorQuotas,
    LocalQueue,
    Namespace,
    PodSet,
    Preemption,
    ResourceQuota,
    frozen_map,
    total_requests,
)
from fairshare.usage.budgets import BUDGET_ACTIONS, BUDGET_KINDS

DEFAULT_TICK_SECONDS = 60

_TOP_FIELDS = (
    "name",
    "description",
    "clock",
    "policy",
    "clusters",
    "resourceFlavors",
    "cohorts",
    "clusterQueues",
    "namespaces",
    "localQueues",
    "budgets",
    "workloads",
    "generators",
)


@dataclass(frozen=True, slots=True)
class Clock:
    """``horizon_seconds`` None: run until every workload has finished (or nothing can change).

    ``start`` (optional): the calendar moment of t=0, which monthly budget renewal needs;
    ``time_zone``: the wall clock months are counted on (default: ``start``'s own offset).
    """

    horizon_seconds: int | None = None
    tick_seconds: int = DEFAULT_TICK_SECONDS
    start: datetime | None = None
    time_zone: tzinfo | None = None


@dataclass(frozen=True, slots=True)
class WorkloadSpec:
    name: str
    local_queue: str
    priority: int
    created_at: float
    submit_at: float
    duration_seconds: int | None
    pod_sets: tuple[PodSet, ...]
    requests: Mapping[str, int]
    max_runtime_seconds: int | None = None  # runs at most this long; safe admission's worst case
    priority_class: str = ""  # optional: the WorkloadPriorityClass it names (explanations only)

    @property
    def run_seconds(self) -> int | None:
        """How long one admission runs: its duration, cut at its maximum runtime (None: until the horizon)."""
        if self.max_runtime_seconds is None:
            return self.duration_seconds
        if self.duration_seconds is None:
            return self.max_runtime_seconds
        return min(self.duration_seconds, self.max_runtime_seconds)


@dataclass(frozen=True, slots=True)
class GeneratorSpec:
    name: str
    local_queue: str
    count: int
    seed: int
    interarrival_seconds: int
    duration_seconds: int
    start_seconds: int
    priority: int
    pod_sets: tuple[PodSet, ...]


@dataclass(frozen=True, slots=True)
class BudgetSpec:
    """A time budget; ``target_kind`` is ``localQueue``, ``namespace`` or ``clusterQueue``.

    ``used_hours`` is what was already used when the run starts, and ``first_renewal_seconds``
    when the current period ends (a live export starts mid-period: exhaustion and renewal come
    when they would on the cluster).
    """

    target_kind: str
    target: str
    kind: str
    allocated_hours: float
    action: str
    resource: str | None = None
    flavor: str | None = None
    name: str | None = None
    renewal_seconds: int | None = None  # None: never renews during the run (or renews monthly)
    used_hours: float = 0.0
    first_renewal_seconds: int | None = None  # None: one whole period after t=0
    monthly_anchor: datetime | None = None  # renewal: monthly, counted from this moment
    safe_admission: bool = False  # a workload whose maxRuntime could overrun what is left waits

    @property
    def label(self) -> str:
        return self.name or f"{self.kind} budget of {self.target_kind} {self.target}"


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """One cluster of a multi-cluster scenario (``clusters``): its flavors are those whose
    ``resourceFlavors[i].cluster`` names it. ``unavailable`` (optional): a window
    ``[from, until)`` in seconds of the run during which the cluster is down: nothing is admitted
    onto its flavors (``Snapshot.unavailable_flavors``); work already running there goes on (an
    unreachable cluster is not known to have stopped it)."""

    name: str
    unavailable: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    clock: Clock
    policy: FairSharingPolicy
    flavors: tuple[str, ...]
    cohorts: tuple[Cohort, ...]
    cluster_queues: tuple[ClusterQueue, ...]
    namespaces: tuple[Namespace, ...]
    local_queues: tuple[LocalQueue, ...]
    initial_usage: Mapping[str, Mapping[str, int]]
    budgets: tuple[BudgetSpec, ...]
    workloads: tuple[WorkloadSpec, ...]
    generators: tuple[GeneratorSpec, ...] = field(default=())
    description: str = ""
    clusters: tuple[ClusterSpec, ...] = field(default=())
    flavor_clusters: Mapping[str, str] = field(default_factory=lambda: frozen_map(None))  # flavor -> cluster

    def cluster_flavors(self, cluster: str) -> tuple[str, ...]:
        """The flavors of ``cluster``, in ``resourceFlavors`` order."""
        return tuple(flavor for flavor in self.flavors if self.flavor_clusters.get(flavor) == cluster)

    def all_workloads(self) -> list[WorkloadSpec]:
        """Explicit workloads plus the generators' arrivals, by submission time then name."""
        items = list(self.workloads) + expand_generators(self.generators)
        items.sort(key=lambda w: (w.submit_at, w.name))
        return items


# --- size limits ------------------------------------------------------------------------------

MAX_DOCUMENT_BYTES = 5 * 1024 * 1024  # a scenario file or posted body


@dataclass(frozen=True, slots=True)
class ScenarioLimits:
    """How large a scenario may be, checked on the raw document before anything is copied or
    built (``check_limits``); an error names the field and the limit. ``manage.py simulate
    --no-size-limits`` lifts them for a trusted file."""

    namespaces: int = 2_000
    local_queues: int = 2_000
    cluster_queues: int = 500
    cohorts: int = 500
    resource_flavors: int = 100
    clusters: int = 100
    budgets: int = 2_000
    workloads: int = 20_000  # explicit workloads plus every generator's count
    generators: int = 1_000
    ticks: int = 200_000  # horizon / tick
    document_bytes: int = MAX_DOCUMENT_BYTES


DEFAULT_LIMITS = ScenarioLimits()

_COUNTED = (
    ("namespaces", "namespaces"),
    ("localQueues", "local_queues"),
    ("clusterQueues", "cluster_queues"),
    ("cohorts", "cohorts"),
    ("resourceFlavors", "resource_flavors"),
    ("clusters", "clusters"),
    ("budgets", "budgets"),
    ("generators", "generators"),
)


def check_limits(document: Mapping[str, Any], limits: ScenarioLimits = DEFAULT_LIMITS) -> None:
    """Refuse a document over ``limits``: counts of the raw lists, explicit workloads plus the
    generators' counts, and horizon / tick. Cheap (no copy, no objects built)."""
    if not isinstance(document, Mapping):
        return  # parse_scenario names the problem
    for key, attribute in _COUNTED:
        value = document.get(key)
        limit = getattr(limits, attribute)
        if isinstance(value, (list, Mapping)) and len(value) > limit:
            raise ValidationError(key, f"at most {limit:,} entries in a scenario, got {len(value):,}")
    workloads = document.get("workloads")
    total = len(workloads) if isinstance(workloads, list) else 0
    generators = document.get("generators")
    for index, entry in enumerate(generators if isinstance(generators, list) else []):
        count = entry.get("count") if isinstance(entry, Mapping) else None
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            total += count
            if total > limits.workloads:
                raise ValidationError(
                    f"generators[{index}].count",
                    f"at most {limits.workloads:,} workloads in a scenario (workloads plus generators' counts)",
                )
    if total > limits.workloads:
        raise ValidationError("workloads", f"at most {limits.workloads:,} workloads in a scenario, got {total:,}")
    clock = _clock(document.get("clock"))
    if clock.horizon_seconds is not None and clock.horizon_seconds // clock.tick_seconds > limits.ticks:
        raise ValidationError(
            "clock.tick",
            f"at most {limits.ticks:,} ticks (horizon / tick), got {clock.horizon_seconds // clock.tick_seconds:,}; "
            "use a longer tick",
        )


# --- reading files ----------------------------------------------------------------------------


def load_document(path: str | Path, limits: ScenarioLimits | None = DEFAULT_LIMITS) -> dict[str, Any]:
    """The raw mapping of a YAML or JSON scenario file (at most ``limits.document_bytes``)."""
    file_path = Path(path)
    try:
        if limits is not None and file_path.stat().st_size > limits.document_bytes:
            raise ValidationError(str(path), f"larger than {limits.document_bytes:,} bytes (the scenario size limit)")
        content = file_path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValidationError(str(path), f"cannot read the scenario file ({exc.strerror or exc})") from None
    try:
        if file_path.suffix.lower() == ".json":
            document = json.loads(content)
        else:
            document = safe_yaml.load(content)
    except RecursionError:
        raise ValidationError(str(path), "nested too deeply") from None
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else "syntax error"
        raise ValidationError(str(path), f"not valid YAML/JSON: {first_line}") from None
    if not isinstance(document, dict):
        raise ValidationError(str(path), "a scenario must be a mapping at the top level")
    return document


def load_scenario(
    path: str | Path, sets: list[str] | tuple[str, ...] = (), limits: ScenarioLimits | None = DEFAULT_LIMITS
) -> Scenario:
    """Read, edit with ``--set`` assignments, and validate a scenario file (``limits`` None: no
    size limits, for a trusted file)."""
    document = load_document(path, limits)
    if limits is not None:
        check_limits(document, limits)
    for assignment in sets:
        apply_set(document, assignment)
    return parse_scenario(document, limits)


# --- validation helpers -----------------------------------------------------------------------


def _mapping(value: Any, where: str, known: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValidationError(where, f"expected a mapping, got {type(value).__name__}")
    for key in value:
        if key not in known:
            raise ValidationError(_join(where, str(key)), f"unknown field (known: {', '.join(known)})")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError(where, f"expected a list, got {type(value).__name__}")
    return value


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _name(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(where, f"expected a non-empty name, got {value!r}")
    if any(ch.isspace() for ch in value):
        raise ValidationError(where, f"names cannot contain spaces, got {value!r}")
    return value


def _required(data: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in data or data[key] is None:
        raise ValidationError(_join(where, key), "is required")
    return data[key]


def _weight(value: Any, where: str, *, positive: bool = False) -> float:
    number = parse_number(value, where)
    if positive and number <= 0:
        raise ValidationError(where, f"must be greater than 0, got {value!r}")
    if number < 0:
        raise ValidationError(where, f"must not be negative, got {value!r}")
    return number


def _integer(value: Any, where: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (isinstance(value, float) and not value.is_integer())
    ):
        raise ValidationError(where, f"expected a whole number, got {value!r}")
    number = int(value)
    if minimum is not None and number < minimum:
        raise ValidationError(where, f"must be at least {minimum}, got {value!r}")
    if maximum is not None and number > maximum:
        raise ValidationError(where, f"must be at most {maximum}")
    return number


def _choice(value: Any, where: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValidationError(where, f"must be one of {', '.join(choices)}, got {value!r}")
    return str(value)


def _unique(names: list[str], where_of: list[str], what: str) -> None:
    seen: dict[str, str] = {}
    for name, where in zip(names, where_of, strict=True):
        if name in seen:
            raise ValidationError(where, f"duplicate {what} {name!r} (also at {seen[name]})")
        seen[name] = where


def _admission_mode(data: Mapping[str, Any], where: str) -> str | None:
    if "admissionScope" not in data or data["admissionScope"] is None:
        return None
    scope_where = _join(where, "admissionScope")
    scope = _mapping(data["admissionScope"], scope_where, ("admissionMode",))
    mode = scope.get("admissionMode")
    if mode is None:
        return None
    return _choice(mode, _join(scope_where, "admissionMode"), ADMISSION_MODES)


def _quotas(value: Any, where: str, flavors: set[str], *, allow_limits: bool, owner: str) -> tuple[FlavorQuotas, ...]:
    result: list[FlavorQuotas] = []
    seen: dict[str, str] = {}
    for index, entry in enumerate(_list(value, where)):
        entry_where = f"{where}[{index}]"
        entry = _mapping(entry, entry_where, ("flavor", "resources"))
        flavor = _name(_required(entry, "flavor", entry_where), _join(entry_where, "flavor"))
        if flavor not in flavors:
            raise ValidationError(
                _join(entry_where, "flavor"), f"unknown resource flavor {flavor!r} (declare it in resourceFlavors)"
            )
        if flavor in seen:
            raise ValidationError(
                _join(entry_where, "flavor"), f"flavor {flavor!r} is listed twice (also at {seen[flavor]})"
            )
        seen[flavor] = entry_where
        resources_where = _join(entry_where, "resources")
        resources_data = _required(entry, "resources", entry_where)
        if not isinstance(resources_data, Mapping) or not resources_data:
            raise ValidationError(resources_where, "expected a non-empty mapping of resource names to quotas")
        resources: dict[str, ResourceQuota] = {}
        for resource, quota_data in resources_data.items():
            quota_where = _join(resources_where, str(resource))
            validate_resource_name(resource, quota_where)
            quota_data = _mapping(quota_data, quota_where, ("nominal", "borrowingLimit", "lendingLimit"))
            nominal = parse_millis(_required(quota_data, "nominal", quota_where), _join(quota_where, "nominal"))
            limits: dict[str, int | None] = {"borrowingLimit": None, "lendingLimit": None}
            for limit in limits:
                if quota_data.get(limit) is not None:
                    if not allow_limits:
                        raise ValidationError(_join(quota_where, limit), f"needs a parent: {owner} is not in a cohort")
                    limits[limit] = parse_millis(quota_data[limit], _join(quota_where, limit))
            lending = limits["lendingLimit"]
            if lending is not None and lending > nominal:
                raise ValidationError(_join(quota_where, "lendingLimit"), "must not exceed the nominal quota")
            resources[resource] = ResourceQuota(nominal, limits["borrowingLimit"], lending)
        result.append(FlavorQuotas(flavor, frozen_map(resources)))
    covered: dict[str, tuple[str, ...]] = {}
    for group_resources, group_flavors in resource_groups(result):
        for resource in group_resources:
            if resource in covered:
                raise ValidationError(
                    where,
                    f"flavors {covered[resource][0]!r} and {group_flavors[0]!r} both cover {resource} but not the same "
                    "resources (flavors sharing a resource must list the same resources, as Kueue's resource groups)",
                )
            covered[resource] = group_flavors
    return tuple(result)


def _pod_sets(value: Any, where: str) -> tuple[PodSet, ...]:
    entries = _list(value, where)
    if not entries:
        raise ValidationError(where, "needs at least one pod set")
    pod_sets: list[PodSet] = []
    for index, entry in enumerate(entries):
        entry_where = f"{where}[{index}]"
        entry = _mapping(entry, entry_where, ("name", "count", "requests"))
        name = _name(entry.get("name", f"ps{index}"), _join(entry_where, "name"))
        count = _integer(entry.get("count", 1), _join(entry_where, "count"), minimum=1)
        requests = parse_resource_list(_required(entry, "requests", entry_where), _join(entry_where, "requests"))
        pod_sets.append(PodSet(name, count, frozen_map(requests)))
    return tuple(pod_sets)


def _local_queue_ref(value: Any, where: str, known: Mapping[str, Any]) -> str:
    name = _name(value, where)
    if name not in known:
        raise ValidationError(where, f"unknown LocalQueue {name!r}")
    return name


# --- the document ------------------------------------------------------------------------------


def parse_scenario(document: Mapping[str, Any], limits: ScenarioLimits | None = DEFAULT_LIMITS) -> Scenario:
    """Validate a scenario document and build the engine objects it describes; a document over
    ``limits`` (``check_limits``) is refused first."""
    if limits is not None:
        check_limits(document, limits)
    doc = _mapping(document, "", _TOP_FIELDS)
    name = doc.get("name", "scenario")
    if not isinstance(name, str) or not name:
        raise ValidationError("name", f"expected a non-empty string, got {name!r}")
    description = doc.get("description") or ""
    if not isinstance(description, str):
        raise ValidationError("description", "expected a string")
    clock = _clock(doc.get("clock"))
    policy = FairSharingPolicy.from_mapping(doc.get("policy") or {}, "policy")

    clusters = _clusters(doc.get("clusters"))
    cluster_names = {c.name for c in clusters}
    flavor_names: list[str] = []
    flavor_where: list[str] = []
    flavor_clusters: dict[str, str] = {}
    for index, entry in enumerate(_list(doc.get("resourceFlavors"), "resourceFlavors")):
        where = f"resourceFlavors[{index}]"
        entry = _mapping(entry, where, ("name", "cluster"))
        flavor = _name(_required(entry, "name", where), _join(where, "name"))
        flavor_names.append(flavor)
        flavor_where.append(_join(where, "name"))
        cluster = entry.get("cluster")
        if cluster is None:
            if clusters:
                raise ValidationError(_join(where, "cluster"), "is required when clusters are listed")
            continue
        cluster = _name(cluster, _join(where, "cluster"))
        if cluster not in cluster_names:
            raise ValidationError(
                _join(where, "cluster"), f"unknown cluster {_short(cluster)!r} (declare it in clusters)"
            )
        flavor_clusters[flavor] = cluster
    _unique(flavor_names, flavor_where, "resource flavor")
    flavors = set(flavor_names)

    cohorts = _cohorts(doc.get("cohorts"), flavors)
    cohort_names = {c.name for c in cohorts}
    cluster_queues = _cluster_queues(doc.get("clusterQueues"), flavors, cohort_names)
    queue_names = {q.name for q in cluster_queues}
    namespaces = _namespaces(doc.get("namespaces"))
    local_queues, initial_usage = _local_queues(doc.get("localQueues"), queue_names)
    declared = {n.name for n in namespaces}
    implicit = sorted({lq.namespace for lq in local_queues} - declared)
    namespaces = namespaces + tuple(Namespace(n) for n in implicit)
    locals_by_key = {lq.key: lq for lq in local_queues}
    budgets = _budgets(doc.get("budgets"), locals_by_key, {n.name for n in namespaces}, queue_names, flavors, clock)
    workloads = _workloads(doc.get("workloads"), locals_by_key)
    generators = _generators(doc.get("generators"), locals_by_key)
    scenario = Scenario(
        name=name,
        clock=clock,
        policy=policy,
        flavors=tuple(flavor_names),
        cohorts=cohorts,
        cluster_queues=cluster_queues,
        namespaces=namespaces,
        local_queues=local_queues,
        initial_usage=frozen_map(initial_usage),
        budgets=budgets,
        workloads=workloads,
        generators=generators,
        description=description,
        clusters=clusters,
        flavor_clusters=frozen_map(flavor_clusters),
    )
    _check_workload_names(scenario)
    return scenario


MAX_NAME_SHOWN = 63  # an error quotes at most this much of a name it refuses


def _short(name: str) -> str:
    return name if len(name) <= MAX_NAME_SHOWN else name[:MAX_NAME_SHOWN] + "…"


def _clusters(value: Any) -> tuple[ClusterSpec, ...]:
    """``clusters: [{name, unavailable: {from, until}}]``: names of at most 63 characters (as a
    stored Cluster's); a window is ``from`` < ``until``, durations from t=0."""
    result: list[ClusterSpec] = []
    wheres: list[str] = []
    for index, entry in enumerate(_list(value, "clusters")):
        where = f"clusters[{index}]"
        entry = _mapping(entry, where, ("name", "unavailable"))
        name = _name(_required(entry, "name", where), _join(where, "name"))
        if len(name) > MAX_NAME_SHOWN:
            raise ValidationError(_join(where, "name"), f"at most {MAX_NAME_SHOWN} characters")
        window = None
        if entry.get("unavailable") is not None:
            w_where = _join(where, "unavailable")
            data = _mapping(entry["unavailable"], w_where, ("from", "until"))
            start = parse_duration(_required(data, "from", w_where), _join(w_where, "from"))
            end = parse_duration(_required(data, "until", w_where), _join(w_where, "until"))
            if end <= start:
                raise ValidationError(_join(w_where, "until"), "must be after from")
            window = (start, end)
        result.append(ClusterSpec(name, window))
        wheres.append(_join(where, "name"))
    _unique([c.name for c in result], wheres, "cluster")
    return tuple(result)


def _clock(value: Any) -> Clock:
    if value is None:
        return Clock()
    data = _mapping(value, "clock", ("horizon", "tick", "start", "timeZone"))
    zone = parse_time_zone(data["timeZone"], "clock.timeZone") if data.get("timeZone") is not None else None
    start = parse_moment(data["start"], "clock.start", zone) if data.get("start") is not None else None
    horizon = None
    if data.get("horizon") is not None:
        horizon = parse_duration(data["horizon"], "clock.horizon")
    tick = DEFAULT_TICK_SECONDS
    if data.get("tick") is not None:
        tick = parse_duration(data["tick"], "clock.tick")
        if tick <= 0:
            raise ValidationError("clock.tick", "must be greater than 0s")
    return Clock(horizon, tick, start, zone)


def _cohorts(value: Any, flavors: set[str]) -> tuple[Cohort, ...]:
    entries = _list(value, "cohorts")
    parsed: list[tuple[Cohort, str]] = []
    for index, entry in enumerate(entries):
        where = f"cohorts[{index}]"
        entry = _mapping(entry, where, ("name", "parent", "weight", "admissionScope", "quotas"))
        name = _name(_required(entry, "name", where), _join(where, "name"))
        parent = entry.get("parent")
        if parent is not None:
            parent = _name(parent, _join(where, "parent"))
        weight = _weight(entry.get("weight", 1), _join(where, "weight"))
        mode = _admission_mode(entry, where)
        quotas = _quotas(
            entry.get("quotas"),
            _join(where, "quotas"),
            flavors,
            allow_limits=parent is not None,
            owner=f"cohort {name}",
        )
        parsed.append((Cohort(name, parent, weight, mode, quotas), where))
    _unique([c.name for c, _ in parsed], [_join(w, "name") for _, w in parsed], "cohort")
    names = {c.name for c, _ in parsed}
    for cohort, where in parsed:
        if cohort.parent is not None and cohort.parent not in names:
            raise ValidationError(_join(where, "parent"), f"unknown cohort {cohort.parent!r}")
        if cohort.parent == cohort.name:
            raise ValidationError(_join(where, "parent"), "a cohort cannot be its own parent")
    by_name = {c.name: c for c, _ in parsed}
    try:
        cohort_chains(by_name)
    except ValidationError as exc:
        index = next(i for i, (c, _) in enumerate(parsed) if f"cohorts.{c.name}." in f"{exc.field}.")
        raise ValidationError(f"cohorts[{index}].parent", exc.message) from None
    return tuple(c for c, _ in parsed)


def _cluster_queues(value: Any, flavors: set[str], cohorts: set[str]) -> tuple[ClusterQueue, ...]:
    result: list[ClusterQueue] = []
    wheres: list[str] = []
    known = ("name", "cohort", "weight", "queueingStrategy", "admissionScope", "quotas", "preemption", "stopPolicy")
    for index, entry in enumerate(_list(value, "clusterQueues")):
        where = f"clusterQueues[{index}]"
        entry = _mapping(entry, where, known)
        name = _name(_required(entry, "name", where), _join(where, "name"))
        cohort = entry.get("cohort")
        if cohort is not None:
            cohort = _name(cohort, _join(where, "cohort"))
            if cohort not in cohorts:
                raise ValidationError(_join(where, "cohort"), f"unknown cohort {cohort!r} (declare it in cohorts)")
        weight = _weight(entry.get("weight", 1), _join(where, "weight"))
        strategy = _choice(
            entry.get("queueingStrategy", "BestEffortFIFO"), _join(where, "queueingStrategy"), QUEUEING_STRATEGIES
        )
        mode = _admission_mode(entry, where)
        quotas = _quotas(
            entry.get("quotas"),
            _join(where, "quotas"),
            flavors,
            allow_limits=cohort is not None,
            owner=f"ClusterQueue {name}",
        )
        preemption = Preemption()
        if entry.get("preemption") is not None:
            p_where = _join(where, "preemption")
            p = _mapping(entry["preemption"], p_where, ("withinClusterQueue", "reclaimWithinCohort"))
            preemption = Preemption(
                _choice(
                    p.get("withinClusterQueue", "Never"),
                    _join(p_where, "withinClusterQueue"),
                    WITHIN_CLUSTER_QUEUE_POLICIES,
                ),
                _choice(
                    p.get("reclaimWithinCohort", "Never"),
                    _join(p_where, "reclaimWithinCohort"),
                    RECLAIM_WITHIN_COHORT_POLICIES,
                ),
            )
        stop = _choice(entry.get("stopPolicy", "None"), _join(where, "stopPolicy"), STOP_POLICIES)
        result.append(ClusterQueue(name, cohort, weight, strategy, mode, quotas, preemption, stop))
        wheres.append(_join(where, "name"))
    _unique([q.name for q in result], wheres, "ClusterQueue")
    return tuple(result)


def _namespaces(value: Any) -> tuple[Namespace, ...]:
    result: list[Namespace] = []
    wheres: list[str] = []
    for index, entry in enumerate(_list(value, "namespaces")):
        where = f"namespaces[{index}]"
        entry = _mapping(entry, where, ("name", "weight", "quota", "preemption"))
        name = _name(_required(entry, "name", where), _join(where, "name"))
        weight = _weight(entry.get("weight", 1), _join(where, "weight"), positive=True)
        quota = parse_resource_list(entry.get("quota") or {}, _join(where, "quota"))
        within = PREEMPT_NEVER
        if entry.get("preemption") is not None:
            p_where = _join(where, "preemption")
            p = _mapping(entry["preemption"], p_where, ("withinNamespace",))
            within = _choice(
                p.get("withinNamespace", PREEMPT_NEVER), _join(p_where, "withinNamespace"), WITHIN_NAMESPACE_POLICIES
            )
        result.append(Namespace(name, weight, frozen_map(quota), within))
        wheres.append(_join(where, "name"))
    _unique([n.name for n in result], wheres, "namespace")
    return tuple(result)


def _local_queues(value: Any, queues: set[str]) -> tuple[tuple[LocalQueue, ...], dict[str, Mapping[str, int]]]:
    result: list[LocalQueue] = []
    wheres: list[str] = []
    usage: dict[str, Mapping[str, int]] = {}
    for index, entry in enumerate(_list(value, "localQueues")):
        where = f"localQueues[{index}]"
        entry = _mapping(entry, where, ("name", "clusterQueue", "weight", "stopPolicy", "initialUsage"))
        key = _name(_required(entry, "name", where), _join(where, "name"))
        parts = key.split("/")
        if len(parts) != 2 or not all(parts):
            raise ValidationError(_join(where, "name"), f"expected namespace/name, got {key!r}")
        queue = _name(_required(entry, "clusterQueue", where), _join(where, "clusterQueue"))
        if queue not in queues:
            raise ValidationError(_join(where, "clusterQueue"), f"unknown ClusterQueue {queue!r}")
        weight = _weight(entry.get("weight", 1), _join(where, "weight"))
        stop = _choice(entry.get("stopPolicy", "None"), _join(where, "stopPolicy"), STOP_POLICIES)
        result.append(LocalQueue(key, parts[0], queue, weight, stop))
        wheres.append(_join(where, "name"))
        if entry.get("initialUsage"):
            usage[key] = frozen_map(parse_resource_list(entry["initialUsage"], _join(where, "initialUsage")))
    _unique([lq.key for lq in result], wheres, "LocalQueue")
    return tuple(result), usage


def _budgets(
    value: Any,
    locals_by_key: Mapping[str, LocalQueue],
    namespaces: set[str],
    queues: set[str],
    flavors: set[str],
    clock: Clock = Clock(),
) -> tuple[BudgetSpec, ...]:
    result: list[BudgetSpec] = []
    targets = {"localQueue": set(locals_by_key), "namespace": namespaces, "clusterQueue": queues}
    known = (
        "name",
        "localQueue",
        "namespace",
        "clusterQueue",
        "kind",
        "allocatedHours",
        "resource",
        "flavor",
        "action",
        "renewal",
        "renewalDays",
        "usedHours",
        "firstRenewalAt",
        "anchor",
        "safeAdmission",
    )
    for index, entry in enumerate(_list(value, "budgets")):
        where = f"budgets[{index}]"
        entry = _mapping(entry, where, known)
        given = [kind for kind in targets if entry.get(kind) is not None]
        if len(given) != 1:
            raise ValidationError(where, "needs exactly one of localQueue, namespace or clusterQueue")
        target_kind = given[0]
        target = _name(entry[target_kind], _join(where, target_kind))
        if target not in targets[target_kind]:
            raise ValidationError(_join(where, target_kind), f"unknown {target_kind} {target!r}")
        kind = _choice(_required(entry, "kind", where), _join(where, "kind"), BUDGET_KINDS)
        hours = _weight(_required(entry, "allocatedHours", where), _join(where, "allocatedHours"))
        used = _weight(entry.get("usedHours", 0), _join(where, "usedHours"))
        action = _choice(entry.get("action", STOP_HOLD), _join(where, "action"), BUDGET_ACTIONS)
        resource = entry.get("resource")
        if kind == "ResourceHours":
            resource = validate_resource_name(_required(entry, "resource", where), _join(where, "resource"))
        elif resource is not None:
            raise ValidationError(_join(where, "resource"), "only ResourceHours budgets count one resource")
        flavor = entry.get("flavor")
        if flavor is not None:
            if kind != "ResourceHours":
                raise ValidationError(_join(where, "flavor"), "only ResourceHours budgets can be limited to a flavor")
            if flavor not in flavors:
                raise ValidationError(_join(where, "flavor"), f"unknown resource flavor {flavor!r}")
        name = entry.get("name")
        if name is not None:
            name = _name(name, _join(where, "name"))
        renewal = _budget_renewal(entry, where)
        monthly_anchor = None
        if entry.get("renewal") == "monthly":
            if clock.start is None:
                raise ValidationError(
                    _join(where, "renewal"),
                    "monthly renewal needs calendar dates: set clock.start (e.g. 2026-11-01T00:00:00Z)",
                )
            monthly_anchor = clock.start
            if entry.get("anchor") is not None:
                monthly_anchor = parse_moment(entry["anchor"], _join(where, "anchor"), clock.time_zone)
        elif entry.get("anchor") is not None:
            raise ValidationError(_join(where, "anchor"), "only used with renewal: monthly (others use firstRenewalAt)")
        first_renewal = None
        if entry.get("firstRenewalAt") is not None:
            if renewal is None:
                raise ValidationError(
                    _join(where, "firstRenewalAt"),
                    "only used with a weekly or days renewal (a monthly one counts from its anchor)",
                )
            first_renewal = parse_duration(entry["firstRenewalAt"], _join(where, "firstRenewalAt"))
            if not 0 < first_renewal <= renewal:
                raise ValidationError(_join(where, "firstRenewalAt"), "must be after 0s and at most one renewal period")
        safe_admission = entry.get("safeAdmission", False)
        if not isinstance(safe_admission, bool):
            raise ValidationError(_join(where, "safeAdmission"), f"expected true or false, got {safe_admission!r}")
        result.append(
            BudgetSpec(
                target_kind,
                target,
                kind,
                hours,
                action,
                resource,
                flavor,
                name,
                renewal,
                used,
                first_renewal,
                monthly_anchor,
                safe_admission,
            )
        )
    return tuple(result)


def _budget_renewal(entry: Mapping[str, Any], where: str) -> int | None:
    """Seconds between renewals, as the live Budget's ``renewal`` (none, weekly, days + renewalDays).

    Monthly renewal has no fixed length: None here, its calendar boundaries come from the
    budget's ``anchor`` (``BudgetSpec.monthly_anchor``).
    """
    renewal = _choice(entry.get("renewal", "none"), _join(where, "renewal"), ("none", "weekly", "days", "monthly"))
    days = entry.get("renewalDays")
    if renewal == "monthly":
        if days is not None:
            raise ValidationError(_join(where, "renewalDays"), "only used with renewal: days")
        return None
    if renewal == "days":
        return (
            _integer(
                _required(entry, "renewalDays", where), _join(where, "renewalDays"), minimum=1, maximum=MAX_RENEWAL_DAYS
            )
            * 86400
        )
    if days is not None:
        raise ValidationError(_join(where, "renewalDays"), "only used with renewal: days")
    return 7 * 86400 if renewal == "weekly" else None


def _workloads(value: Any, locals_by_key: Mapping[str, LocalQueue]) -> tuple[WorkloadSpec, ...]:
    result: list[WorkloadSpec] = []
    known = (
        "name",
        "localQueue",
        "priority",
        "priorityClass",
        "createdAt",
        "submitAt",
        "duration",
        "maxRuntime",
        "podSets",
    )
    for index, entry in enumerate(_list(value, "workloads")):
        where = f"workloads[{index}]"
        entry = _mapping(entry, where, known)
        name = _name(_required(entry, "name", where), _join(where, "name"))
        local_queue = _local_queue_ref(_required(entry, "localQueue", where), _join(where, "localQueue"), locals_by_key)
        priority = _integer(entry.get("priority", 0), _join(where, "priority"))
        submit_at = parse_duration(entry.get("submitAt", 0), _join(where, "submitAt"))
        created_at = submit_at
        if entry.get("createdAt") is not None:
            created_at = parse_duration(entry["createdAt"], _join(where, "createdAt"), allow_negative=True)
        duration = None
        if entry.get("duration") is not None:
            duration = parse_duration(entry["duration"], _join(where, "duration"))
            if duration <= 0:
                raise ValidationError(_join(where, "duration"), "must be greater than 0s")
        max_runtime = None
        if entry.get("maxRuntime") is not None:
            max_runtime = parse_duration(entry["maxRuntime"], _join(where, "maxRuntime"))
            if max_runtime <= 0:
                raise ValidationError(_join(where, "maxRuntime"), "must be greater than 0s")
        pod_sets = _pod_sets(_required(entry, "podSets", where), _join(where, "podSets"))
        priority_class = ""
        if entry.get("priorityClass") is not None:
            priority_class = _name(entry["priorityClass"], _join(where, "priorityClass"))
        result.append(
            WorkloadSpec(
                name,
                local_queue,
                priority,
                created_at,
                submit_at,
                duration,
                pod_sets,
                frozen_map(total_requests(pod_sets)),
                max_runtime,
                priority_class,
            )
        )
    return tuple(result)


def _generators(value: Any, locals_by_key: Mapping[str, LocalQueue]) -> tuple[GeneratorSpec, ...]:
    result: list[GeneratorSpec] = []
    known = ("name", "localQueue", "count", "seed", "interarrival", "duration", "start", "priority", "podSets")
    for index, entry in enumerate(_list(value, "generators")):
        where = f"generators[{index}]"
        entry = _mapping(entry, where, known)
        local_queue = _local_queue_ref(_required(entry, "localQueue", where), _join(where, "localQueue"), locals_by_key)
        name = _name(entry.get("name", f"{local_queue.replace('/', '-')}-gen{index}"), _join(where, "name"))
        count = _integer(_required(entry, "count", where), _join(where, "count"), minimum=0)
        seed = _integer(entry.get("seed", index), _join(where, "seed"))
        interarrival = parse_duration(entry.get("interarrival", 0), _join(where, "interarrival"))
        duration = parse_duration(_required(entry, "duration", where), _join(where, "duration"))
        if duration <= 0:
            raise ValidationError(_join(where, "duration"), "must be greater than 0s")
        start = parse_duration(entry.get("start", 0), _join(where, "start"))
        priority = _integer(entry.get("priority", 0), _join(where, "priority"))
        pod_sets = _pod_sets(_required(entry, "podSets", where), _join(where, "podSets"))
        result.append(GeneratorSpec(name, local_queue, count, seed, interarrival, duration, start, priority, pod_sets))
    _unique([g.name for g in result], [f"generators[{i}].name" for i in range(len(result))], "generator")
    return tuple(result)


def expand_generators(generators: tuple[GeneratorSpec, ...]) -> list[WorkloadSpec]:
    """The workloads a set of seeded generators produce (same seed, same workloads)."""
    result: list[WorkloadSpec] = []
    for generator in generators:
        rng = random.Random(generator.seed)
        requests = frozen_map(total_requests(generator.pod_sets))
        width = max(1, len(str(generator.count)))
        t = float(generator.start_seconds)
        for index in range(generator.count):
            if index and generator.interarrival_seconds > 0:
                t += rng.expovariate(1.0 / generator.interarrival_seconds)
            submit = float(round(t))
            result.append(
                WorkloadSpec(
                    f"{generator.name}-{index + 1:0{width}d}",
                    generator.local_queue,
                    generator.priority,
                    submit,
                    submit,
                    generator.duration_seconds,
                    generator.pod_sets,
                    requests,
                )
            )
    return result


def _check_workload_names(scenario: Scenario) -> None:
    seen: dict[str, str] = {}
    for index, workload in enumerate(scenario.workloads):
        where = f"workloads[{index}].name"
        if workload.name in seen:
            raise ValidationError(where, f"duplicate workload {workload.name!r} (also at {seen[workload.name]})")
        seen[workload.name] = where
    for index, generator in enumerate(scenario.generators):
        prefix = f"{generator.name}-"
        for name, where in seen.items():
            if (
                name.startswith(prefix)
                and name[len(prefix) :].isdigit()
                and 1 <= int(name[len(prefix) :]) <= generator.count
            ):
                raise ValidationError(
                    f"generators[{index}].name", f"generated names {prefix}N clash with {where} ({name!r})"
                )


# --- --set editing ----------------------------------------------------------------------------

# Lists whose entries ``--set`` finds by a name field (besides a numeric index).
_LIST_KEYS = {
    "clusters": ("name",),
    "resourceFlavors": ("name",),
    "cohorts": ("name",),
    "clusterQueues": ("name",),
    "namespaces": ("name",),
    "localQueues": ("name",),
    "workloads": ("name",),
    "generators": ("name", "localQueue"),
    "budgets": ("name", "localQueue", "namespace", "clusterQueue"),
    "quotas": ("flavor",),
    "podSets": ("name",),
}
# Mapping fields ``--set`` may create when they are missing.
_CONTAINERS = {
    "clock",
    "policy",
    "admissionScope",
    "preemption",
    "usageWindow",
    "resourceWeights",
    "quota",
    "initialUsage",
    "resources",
    "requests",
    "unavailable",
}
_QUOTA_FIELDS = ("nominal", "borrowingLimit", "lendingLimit")
MAX_SET_VALUE_BYTES = 64 * 1024  # one --set value: a number, a name, a small mapping


def apply_set(document: dict[str, Any], assignment: str) -> None:
    """Apply one ``path=value`` edit to a raw scenario document (in place).

    Lists are entered by an entry's name (``localQueues.team-a/main``), a quota list by flavor
    (``clusterQueues.cq-a.quotas.default.cpu.nominal``), budgets by their target or index.
    Names may contain dots (``policy.resourceWeights.nvidia.com/gpu=10``). The value is read as
    YAML (``3``, ``0.5``, ``null``, ``2h``). Unknown paths raise a one-line ``ValidationError``.
    """
    if "=" not in assignment:
        raise ValidationError(f"--set {assignment}", "expected path=value")
    path, raw = assignment.split("=", 1)
    path = path.strip()
    where = f"--set {path}"
    if not path:
        raise ValidationError(where, "the path is empty")
    try:
        value = safe_yaml.load(raw, max_bytes=MAX_SET_VALUE_BYTES) if raw.strip() else ""
    except safe_yaml.YAMLRefused as refused:
        raise ValidationError(where, str(refused)) from None
    except yaml.YAMLError:
        value = raw
    segments = path.split(".")
    node: Any = document
    list_name = ""
    i = 0
    while True:
        remaining = segments[i:]
        if isinstance(node, list):
            match = _find_entry(node, list_name, remaining)
            if match is None:
                raise ValidationError(where, f"no {list_name or 'list'} entry named {remaining[0]!r}")
            node, used = match
            i += used
            if i == len(segments):
                raise ValidationError(where, "the path names a whole entry; add the field to set")
            continue
        if not isinstance(node, dict):
            raise ValidationError(where, f"cannot go into {segments[i - 1]!r}: it is a value, not a mapping")
        if list_name == "quotas" and "resources" in node and remaining[0] not in ("resources", "flavor"):
            node = node["resources"]
            list_name = "resources"
            continue
        if list_name == "resources" and remaining[-1] in _QUOTA_FIELDS and len(remaining) >= 2:
            resource = ".".join(remaining[:-1])
            entry = node.setdefault(resource, {})
            if not isinstance(entry, dict):
                raise ValidationError(where, f"{resource!r} is not a quota mapping")
            entry[remaining[-1]] = value
            return
        key, used = _find_key(node, remaining)
        if key is None:
            first = remaining[0]
            if len(remaining) > 1 and first in _CONTAINERS:
                node[first] = {}
                key, used = first, 1
            elif i == 0 and first not in _TOP_FIELDS:
                raise ValidationError(where, f"unknown top-level field {first!r}")
            else:
                node[".".join(remaining)] = value
                return
        if i + used == len(segments):
            node[key] = value
            return
        child = node[key]
        if child is None and key in _CONTAINERS:
            child = node[key] = {}
        if child is None and key in _LIST_KEYS:
            raise ValidationError(where, f"{key} is empty")
        list_name = key
        node = child
        i += used


def _find_key(node: dict[str, Any], remaining: list[str]) -> tuple[str | None, int]:
    for length in range(len(remaining), 0, -1):
        key = ".".join(remaining[:length])
        if key in node:
            return key, length
    return None, 0


def _find_entry(entries: list[Any], list_name: str, remaining: list[str]) -> tuple[Any, int] | None:
    fields = _LIST_KEYS.get(list_name, ("name",))
    for length in range(len(remaining), 0, -1):
        wanted = ".".join(remaining[:length])
        for entry in entries:
            if isinstance(entry, dict) and any(entry.get(f) == wanted for f in fields):
                return entry, length
    if remaining[0].isdigit() and int(remaining[0]) < len(entries):
        return entries[int(remaining[0])], 1
    return None
