"""What an import removes or re-parents, and whether admitted work depends on it.

An import treats each Cohort and ClusterQueue document as the whole object: a document that
omits ``parentName`` / ``cohortName`` detaches it, one that omits a flavor or a resource deletes
those quota rows. Objects absent from the file are never deleted (no pruning), so the
disruptions an import can cause are:

* **quota deletions**: a ClusterQueue's or Cohort's quota row (flavor, resource) the document no
  longer lists, and a whole flavor when none of its rows is left;
* **re-parenting**: a Cohort's parent or a ClusterQueue's cohort that changes (or is removed).

Admitted work depends on

* a ClusterQueue's quota row when workloads admitted on that ClusterQueue use that flavor and
  resource;
* a Cohort's quota row when a ClusterQueue under that cohort borrows that flavor and resource
  (admitted usage above its own nominal quota);
* a link (cohort -> parent, ClusterQueue -> cohort) when, in the cohort tree the link belongs
  to, a ClusterQueue on the moving side borrows anything (it may borrow from the other side), or
  a ClusterQueue on the other side borrows a flavor and resource the moving side has quota for
  (it may borrow that quota).

``find_disruptions`` reads the stored state in a fixed number of queries (five) whatever the
size of the cluster or the file, and writes nothing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Sum

from core.formatting import format_for_humans
from queues.interop.kueue import specs
from queues.models import ClusterQueue, ClusterQueueQuota, Cohort, CohortQuota, WorkloadResource, WorkloadState

DELETE = "delete"
REPARENT = "reparent"
# At most this many dependents are named per disruption; the rest are counted.
MAX_DEPENDENTS_NAMED = 5

Cell = tuple[str, str]  # (flavor, resource)


@dataclass
class Disruption:
    """One deletion or re-parenting; ``dependents`` says why admitted work depends on it."""

    action: str  # DELETE or REPARENT
    kind: str  # Cohort or ClusterQueue
    name: str
    what: str  # "quota a100/nvidia.com/gpu (nominal 8)", "flavor a100", "parent org -> (none)"
    document: int
    dependents: list[str] = field(default_factory=list)

    @property
    def depended_on(self) -> bool:
        return bool(self.dependents)

    def as_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "kind": self.kind,
            "name": self.name,
            "what": self.what,
            "document": self.document,
            "admittedWorkDependsOnIt": self.depended_on,
            "dependents": self.dependents,
        }

    def __str__(self) -> str:
        head = f"{self.action} {self.kind} {self.name}: {self.what}"
        if not self.dependents:
            return f"{head} (no admitted work depends on it)"
        return f"{head} (admitted work depends on it: {'; '.join(self.dependents)})"


@dataclass
class _Stored:
    """The stored structure and admitted usage the rules above need (by name)."""

    usage: dict[str, dict[Cell, tuple[int, int]]]  # ClusterQueue -> cell -> (amount, workloads)
    queue_rows: dict[str, dict[Cell, int]]  # ClusterQueue -> cell -> nominal
    cohort_rows: dict[str, dict[Cell, int]]
    queue_cohort: dict[str, str | None]
    cohort_parent: dict[str, str | None]

    @classmethod
    def load(cls) -> _Stored:
        usage: dict[str, dict[Cell, tuple[int, int]]] = defaultdict(dict)
        admitted = (
            WorkloadResource.objects.filter(
                workload__state=WorkloadState.ADMITTED, workload__cluster_queue__isnull=False
            )
            .values_list("workload__cluster_queue__name", "flavor__name", "resource")
            .annotate(total=Sum("amount"), workloads=Count("workload", distinct=True))
        )
        for queue, flavor, resource, total, workloads in admitted:
            usage[queue][(flavor or "", resource)] = (int(total), int(workloads))
        queue_rows: dict[str, dict[Cell, int]] = defaultdict(dict)
        for queue, flavor, resource, nominal in ClusterQueueQuota.objects.values_list(
            "cluster_queue__name", "flavor__name", "resource", "nominal"
        ):
            queue_rows[queue][(flavor, resource)] = nominal
        cohort_rows: dict[str, dict[Cell, int]] = defaultdict(dict)
        for cohort, flavor, resource, nominal in CohortQuota.objects.values_list(
            "cohort__name", "flavor__name", "resource", "nominal"
        ):
            cohort_rows[cohort][(flavor, resource)] = nominal
        return cls(
            usage=dict(usage),
            queue_rows=dict(queue_rows),
            cohort_rows=dict(cohort_rows),
            queue_cohort=dict(ClusterQueue.objects.values_list("name", "cohort__name")),
            cohort_parent=dict(Cohort.objects.values_list("name", "parent__name")),
        )

    def root(self, cohort: str) -> str:
        seen = {cohort}
        while (parent := self.cohort_parent.get(cohort)) is not None and parent not in seen:
            seen.add(parent)
            cohort = parent
        return cohort

    def under(self, cohort: str) -> set[str]:
        """``cohort`` and every cohort below it."""
        found = {cohort}
        changed = True
        while changed:
            changed = False
            for child, parent in self.cohort_parent.items():
                if parent in found and child not in found:
                    found.add(child)
                    changed = True
        return found

    def borrowed(self, queue: str) -> dict[Cell, int]:
        """What ``queue``'s admitted work uses beyond its own nominal quota, per cell."""
        nominal = self.queue_rows.get(queue, {})
        return {
            cell: amount - nominal.get(cell, 0)
            for cell, (amount, _workloads) in self.usage.get(queue, {}).items()
            if amount > nominal.get(cell, 0)
        }

    def link_dependents(self, old: str | None, moving_cohorts: set[str], moving_queues: set[str]) -> list[str]:
        """Why admitted work depends on the link from the moving side to ``old`` (see above)."""
        if old is None:
            return []  # it borrowed from nothing: only gains are possible
        provided = {
            cell for cohort in moving_cohorts for cell, nominal in self.cohort_rows.get(cohort, {}).items() if nominal
        }
        provided |= {
            cell for queue in moving_queues for cell, nominal in self.queue_rows.get(queue, {}).items() if nominal
        }
        tree = self.under(self.root(old))
        reasons = []
        for queue in sorted(q for q, c in self.queue_cohort.items() if c in tree or q in moving_queues):
            for (flavor, resource), amount in sorted(self.borrowed(queue).items()):
                if queue in moving_queues or (flavor, resource) in provided:
                    reasons.append(
                        f"ClusterQueue {queue} borrows {format_for_humans(amount, resource)} {resource} on {flavor}"
                    )
        return _bounded(reasons)

    def borrowers(self, cohorts: set[str], cell: Cell | None = None) -> list[str]:
        """Why: each ClusterQueue in ``cohorts`` that borrows (``cell``, or anything)."""
        reasons = []
        for queue in sorted(q for q, c in self.queue_cohort.items() if c in cohorts):
            for (flavor, resource), amount in sorted(self.borrowed(queue).items()):
                if cell is None or cell == (flavor, resource):
                    reasons.append(
                        f"ClusterQueue {queue} borrows {format_for_humans(amount, resource)} {resource} on {flavor}"
                    )
        return _bounded(reasons)


def _bounded(reasons: list[str]) -> list[str]:
    if len(reasons) <= MAX_DEPENDENTS_NAMED:
        return reasons
    return [*reasons[:MAX_DEPENDENTS_NAMED], f"and {len(reasons) - MAX_DEPENDENTS_NAMED} more"]


def _link(old: str | None, new: str | None) -> str:
    return f"{old or '(none)'} -> {new or '(none)'}"


def find_disruptions(parsed: specs.ParsedManifests) -> list[Disruption]:
    """Every deletion and re-parenting applying ``parsed`` would cause, in document order."""
    stored = _Stored.load()
    found: list[Disruption] = []
    for spec in parsed.objects:
        if isinstance(spec, specs.CohortSpec) and spec.name in stored.cohort_parent:
            old = stored.cohort_parent[spec.name]
            if old != spec.parent:
                moving = stored.under(spec.name)
                queues = {q for q, c in stored.queue_cohort.items() if c in moving}
                reasons = stored.link_dependents(old, moving, queues)
                found.append(
                    Disruption(REPARENT, spec.kind, spec.name, f"parent {_link(old, spec.parent)}", spec.index, reasons)
                )
            found += _removed_rows(spec, stored.cohort_rows.get(spec.name, {}), stored, queue=False)
        elif isinstance(spec, specs.ClusterQueueSpec) and spec.name in stored.queue_cohort:
            old = stored.queue_cohort[spec.name]
            if old != spec.cohort:
                reasons = stored.link_dependents(old, set(), {spec.name})
                found.append(
                    Disruption(REPARENT, spec.kind, spec.name, f"cohort {_link(old, spec.cohort)}", spec.index, reasons)
                )
            found += _removed_rows(spec, stored.queue_rows.get(spec.name, {}), stored, queue=True)
    return found


def _removed_rows(
    spec: specs.CohortSpec | specs.ClusterQueueSpec, rows: dict[Cell, int], stored: _Stored, *, queue: bool
) -> list[Disruption]:
    kept = {(quota.flavor, quota.resource) for quota in spec.quotas}
    kept_flavors = {flavor for flavor, _ in kept}
    found: list[Disruption] = []
    for flavor in sorted({flavor for flavor, _ in rows} - kept_flavors):
        reasons: list[str] = []
        for cell in sorted(c for c in rows if c[0] == flavor):
            reasons += _row_dependents(spec.name, cell, stored, queue=queue)
        found.append(
            Disruption(DELETE, spec.kind, spec.name, f"flavor {flavor} (all its quota)", spec.index, _bounded(reasons))
        )
    for cell in sorted(set(rows) - kept):
        flavor, resource = cell
        what = f"quota {flavor}/{resource} (nominal {format_for_humans(rows[cell], resource)})"
        found.append(
            Disruption(
                DELETE, spec.kind, spec.name, what, spec.index, _row_dependents(spec.name, cell, stored, queue=queue)
            )
        )
    return found


def _row_dependents(owner: str, cell: Cell, stored: _Stored, *, queue: bool) -> list[str]:
    if not queue:
        return stored.borrowers(stored.under(owner), cell)
    amount, workloads = stored.usage.get(owner, {}).get(cell, (0, 0))
    if not amount:
        return []
    flavor, resource = cell
    return [f"{workloads} admitted workload(s) use {format_for_humans(amount, resource)} {resource} on {flavor}"]
