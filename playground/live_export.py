"""Today's cluster as a scenario document the engine's loader accepts (docs/design.md format).

The export is a replay: time 0 is ``days`` before now, and the scenario holds

* the policy: flavors, cohorts, ClusterQueues with quotas, namespaces with weights and hard
  quotas, LocalQueues with weights, the fair-sharing knobs of the settings, and budgets with
  what their current period had used by time 0 (``usedHours``);
* each LocalQueue's decayed usage at time 0 as ``initialUsage`` (the usage series' last sample
  at or before it; with ``days=0`` the live ``consumed_resources``);
* the workloads: those that finished in the window (submitted at their queue timestamp,
  running as long as their last admission ran), those running now and those pending now.
  Work that was already queued or running at time 0 is submitted at 0 with its earlier queue
  timestamp as ``createdAt`` (negative), and runs for the part of its run inside the window.
  A workload that declares no duration runs until the horizon;
* a horizon of the window plus ``lookahead`` and a tick giving at most ~600 points.

For a tenant (``visible_namespaces`` given) other namespaces, their LocalQueues, workloads and
budgets are renamed ``other-N``, ``other-N/queue-M``, ``other-N/w-K``, ``budget-N``: the
what-if still competes with the real load without learning who the others are.

The queue structure (cohorts, ClusterQueues, namespaces, LocalQueues and their usage) is read
by the admission pass's bridge (``queues.admission.load.load_structure``: rows -> engine types)
and written by the engine's ``fairshare.simulation.export`` (engine types -> document entries);
this module adds what only a replay has: renamed tenants, usage at time 0, budgets, workloads.

A fixed number of queries whatever the number of workloads (two more per budget).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import OuterRef, Q, Subquery

from fairshare.durations import format_duration
from fairshare.errors import ValidationError
from fairshare.quantities import format_quantity
from fairshare.simulation import export as to_document
from playground.budget_export import exported_budgets
from playground.documents import MAX_WORKLOADS
from queues.admission.load import ClusterStructure, load_structure
from queues.models import Cluster, ResourceFlavor, UsageSample, Workload, WorkloadState

MAX_DAYS = 30
MAX_POINTS = 600


@dataclass(frozen=True)
class LiveOptions:
    """``days`` of finished work to replay (0: start from now), and how long to look ahead."""

    days: float = 1.0
    lookahead_seconds: int = 6 * 3600

    def __post_init__(self) -> None:
        if not isinstance(self.days, (int, float)) or not 0 <= self.days <= MAX_DAYS or math.isnan(self.days):
            raise ValidationError("days", f"must be between 0 and {MAX_DAYS}, got {self.days!r}")
        if not isinstance(self.lookahead_seconds, int) or not 0 < self.lookahead_seconds <= 30 * 86400:
            raise ValidationError("lookahead", "must be more than 0s and at most 30d")

    def to_dict(self) -> dict[str, Any]:
        return {"days": self.days, "lookahead": format_duration(self.lookahead_seconds)}


@dataclass
class _Names:
    """Names as the viewer may see them: real ones, or stable stand-ins for other tenants."""

    visible: set[int] | None  # namespace ids; None = everything
    namespaces: dict[int, str] = field(default_factory=dict)
    local_queues: dict[int, str] = field(default_factory=dict)
    hidden_queue_count: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    hidden_workload_count: dict[int, int] = field(default_factory=lambda: defaultdict(int))

    def hides(self, namespace_id: int) -> bool:
        return self.visible is not None and namespace_id not in self.visible

    def workload(self, namespace_id: int, name: str) -> str:
        if not self.hides(namespace_id):
            return f"{self.namespaces[namespace_id]}/{name}"
        self.hidden_workload_count[namespace_id] += 1
        return f"{self.namespaces[namespace_id]}/w-{self.hidden_workload_count[namespace_id]}"


def _tick(horizon: int) -> int:
    """A whole-minute tick giving at most MAX_POINTS series points."""
    return max(60, math.ceil(horizon / MAX_POINTS / 60) * 60)


def export_live_state(
    *, now: datetime, options: LiveOptions = LiveOptions(), visible_namespaces: set[int] | None = None
) -> dict[str, Any]:
    """The scenario document of the cluster at ``now`` (see the module docstring)."""
    start = now - timedelta(days=options.days)
    names = _Names(visible=visible_namespaces)
    structure = _structure(replay=options.days > 0, start=start)
    window = round((now - start).total_seconds())
    horizon = window + options.lookahead_seconds
    document: dict[str, Any] = {
        "name": f"live-{now:%Y%m%d-%H%M}",
        "description": (
            f"Today's cluster at {now:%Y-%m-%d %H:%M} UTC: {_days_text(options.days)} of finished work replayed, "
            f"then {format_duration(options.lookahead_seconds)} ahead."
        ),
        "clock": {
            "horizon": format_duration(horizon),
            "tick": format_duration(_tick(horizon)),
            # t=0 on the calendar, for budgets that renew monthly (``budget_export``)
            "start": start.isoformat(),
            "timeZone": settings.TIME_ZONE,
        },
        "policy": settings.FAIR_SHARING.to_mapping(),
        **_clusters_and_flavors(),
        "cohorts": [to_document.cohort(cohort) for cohort in structure.cohorts],
        "clusterQueues": [to_document.cluster_queue(queue) for queue in structure.cluster_queues],
    }
    document["namespaces"] = _namespaces(names, structure)
    document["localQueues"] = _local_queues(names, structure, replay=options.days > 0)
    budgets = _budgets(names, start=start)
    if budgets:
        document["budgets"] = budgets
    document["workloads"] = _workloads(names, start=start, now=now, horizon=horizon)
    return document


def export_policy(*, now: datetime) -> dict[str, Any]:
    """The stored policy alone (no workloads, no usage), in the same form as a live export:
    what ``apply`` compares a run's baseline with before it writes anything."""
    names = _Names(visible=None)
    structure = _structure(replay=False, start=now)
    document: dict[str, Any] = {
        "name": "policy",
        # calendar dates, as in a live export: a monthly budget's renewal is counted on them
        "clock": {"start": now.isoformat(), "timeZone": settings.TIME_ZONE},
        "policy": settings.FAIR_SHARING.to_mapping(),
        **_clusters_and_flavors(),
        "cohorts": [to_document.cohort(cohort) for cohort in structure.cohorts],
        "clusterQueues": [to_document.cluster_queue(queue) for queue in structure.cluster_queues],
        "namespaces": _namespaces(names, structure),
    }
    document["localQueues"] = _local_queues(names, structure, replay=False)
    for entry in document["localQueues"]:
        entry.pop("initialUsage", None)
    document["budgets"] = _budgets(names, start=now)
    return document


def _clusters_and_flavors() -> dict[str, Any]:
    """``resourceFlavors``, and with several clusters ``clusters`` and each flavor's cluster (so
    a what-if can move flavors between them and the replay reports per cluster). Two queries.
    An installation with one cluster exports its flavors alone, as before clusters existed."""
    clusters = list(Cluster.objects.order_by("name").values_list("name", flat=True))
    rows = ResourceFlavor.objects.order_by("name").values_list("name", "cluster__name")
    if len(clusters) < 2:
        return {"resourceFlavors": [{"name": name} for name, _ in rows]}
    return {
        "clusters": [{"name": name} for name in clusters],
        "resourceFlavors": [{"name": name, "cluster": cluster} for name, cluster in rows],
    }


def _days_text(days: float) -> str:
    if days == 0:
        return "no history"
    return f"{days:g} day" + ("" if days == 1 else "s")


def _structure(*, replay: bool, start: datetime) -> ClusterStructure:
    """The cluster's structure through the bridge; replaying, each LocalQueue's usage series
    value at ``start`` comes along (``usage_at_start``), in the same query."""
    if not replay:
        return load_structure()
    at_start = UsageSample.objects.filter(
        kind=UsageSample.Kind.LOCAL_QUEUE, object_id=OuterRef("id"), sampled_at__lte=start
    ).order_by("-sampled_at", "-id")
    return load_structure(local_queue_annotations={"usage_at_start": Subquery(at_start.values("consumed")[:1])})


def _namespaces(names: _Names, structure: ClusterStructure) -> list[dict[str, Any]]:
    result = []
    hidden = 0
    for namespace_id, namespace in structure.namespaces.items():
        name = namespace.name
        if names.hides(namespace_id):
            hidden += 1
            name = f"other-{hidden}"
        names.namespaces[namespace_id] = name
        result.append(to_document.namespace(replace(namespace, name=name)))
    result.sort(key=lambda entry: entry["name"])
    return result


def _local_queues(names: _Names, structure: ClusterStructure, *, replay: bool) -> list[dict[str, Any]]:
    result = []
    for lq_id, (queue, usage, row) in structure.local_queues.items():
        namespace_id = row["namespace_id"]
        if names.hides(namespace_id):
            names.hidden_queue_count[namespace_id] += 1
            key = f"{names.namespaces[namespace_id]}/queue-{names.hidden_queue_count[namespace_id]}"
        else:
            key = f"{names.namespaces[namespace_id]}/{row['name']}"
        names.local_queues[lq_id] = key
        initial = (row.get("usage_at_start") or {}) if replay else usage.consumed
        result.append(
            to_document.local_queue(replace(queue, key=key, namespace=names.namespaces[namespace_id]), initial)
        )
    result.sort(key=lambda entry: entry["name"])
    return result


def _budgets(names: _Names, *, start: datetime) -> list[dict[str, Any]]:
    """Budgets with what their current period had used by ``start`` (``budget_export``)."""
    return exported_budgets(names.local_queues, names.namespaces, names.hides, start=start)


def _workloads(names: _Names, *, start: datetime, now: datetime, horizon: int) -> list[dict[str, Any]]:
    relevant = Q(state__in=(WorkloadState.PENDING, WorkloadState.ADMITTED)) | Q(
        state__in=(WorkloadState.FINISHED, WorkloadState.FAILED), finished_at__gte=start, admitted_at__isnull=False
    )
    rows = (
        Workload.objects.filter(relevant)
        .order_by("queued_at", "id")
        .values_list(
            "namespace_id",
            "local_queue_id",
            "name",
            "priority",
            "queued_at",
            "state",
            "admitted_at",
            "finished_at",
            "duration_seconds",
            "max_runtime_seconds",
            "pod_sets",
            "priority_class",
        )
    )
    count = rows.count()
    if count > MAX_WORKLOADS:
        raise ValidationError(
            "days",
            f"the window holds {count:,} workloads, more than the {MAX_WORKLOADS:,} a run may have; replay fewer days",
        )
    result = []
    for (
        namespace_id,
        lq_id,
        name,
        priority,
        queued_at,
        state,
        admitted_at,
        finished_at,
        duration,
        max_runtime,
        pod_sets,
        priority_class,
    ) in rows.iterator(chunk_size=2000):
        created = (queued_at - start).total_seconds()
        entry: dict[str, Any] = {
            "name": names.workload(namespace_id, name),
            "localQueue": names.local_queues[lq_id],
            "priority": priority,
            **({"priorityClass": priority_class} if priority_class else {}),
            "createdAt": format_duration(created),
            "submitAt": format_duration(max(0.0, created)),
        }
        run_seconds = _replay_duration(state, admitted_at, finished_at, duration, max_runtime, start=start, now=now)
        if run_seconds is not None:
            entry["duration"] = format_duration(max(1, run_seconds))
        entry["podSets"] = [
            {
                "name": pod_set.get("name", f"ps{index}"),
                "count": pod_set.get("count", 1),
                "requests": {r: format_quantity(int(a), r) for r, a in sorted(pod_set["requests"].items())},
            }
            for index, pod_set in enumerate(pod_sets or [])
        ]
        result.append(entry)
    return result


def _replay_duration(
    state: str,
    admitted_at: datetime | None,
    finished_at: datetime | None,
    declared: int | None,
    max_runtime: int | None,
    *,
    start: datetime,
    now: datetime,
) -> int | None:
    """How long a workload runs in the replay; None = until the horizon (nothing declared)."""
    if state in (WorkloadState.FINISHED, WorkloadState.FAILED):
        assert admitted_at is not None and finished_at is not None
        return round((finished_at - max(admitted_at, start)).total_seconds())
    expected = declared if max_runtime is None else min(max_runtime, declared or max_runtime)
    if expected is None:
        return None
    if state == WorkloadState.ADMITTED and admitted_at is not None and admitted_at < start:
        # Running since before the window: only the part after time 0 is replayed.
        return round(expected - (start - admitted_at).total_seconds())
    return expected
