"""What depends on a policy object: the rows that refer to it, each with what a delete does to
them (refused while they exist, deleted with it, unlinked), for the delete confirmation page
and the delete service (``queues.services.policy.delete_policy_object``).

Generic over the model's reverse relations (hidden ones included), so the rows other apps
hang on a queues object (budgets on a ClusterQueue, charges on a workload) are counted without
queues importing them. Workloads, and rows of a workload (its resources), also count how many
are admitted now: admitted work is what a delete must never pull the ground from under.

Queries: one count per reverse relation that has rows, one more for the admitted ones and one
for the names of up to ``NAMED`` rows that refuse the delete; admins only (names are not redacted).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import models
from django.db.models import ForeignObjectRel

from queues.models import Cohort, Workload, WorkloadState

NAMED = 5  # names shown per relation that refuses the delete


class Effect:
    BLOCKS = "blocks"  # PROTECT / RESTRICT: the delete is refused while any exists
    DELETED = "deleted"  # CASCADE: deleted with the object
    UNLINKED = "unlinked"  # SET_NULL / SET_DEFAULT: kept, no longer linked


@dataclass(frozen=True)
class Dependent:
    """The rows of one reverse relation that refer to the object."""

    label: str
    count: int
    effect: str
    admitted: int = 0
    names: list[str] = field(default_factory=list)

    @property
    def blocks(self) -> bool:
        return self.effect == Effect.BLOCKS


@dataclass(frozen=True)
class Dependents:
    rows: list[Dependent]

    @property
    def blocking(self) -> list[Dependent]:
        return [row for row in self.rows if row.blocks]

    @property
    def admitted(self) -> int:
        """Admitted workloads among what refers to the object."""
        return max((row.admitted for row in self.rows), default=0)

    def sentence(self) -> str:
        """Why a delete is refused (empty when it is not)."""
        if not self.blocking:
            return ""
        parts = []
        for row in self.blocking:
            named = f" ({', '.join(row.names)}{', ...' if row.count > len(row.names) else ''})" if row.names else ""
            admitted = f", {row.admitted} of them admitted now" if row.admitted else ""
            parts.append(f"{row.count} {row.label}{named}{admitted}")
        lead = f"{self.admitted} admitted workloads depend on it. " if self.admitted else ""
        return f"{lead}Still used by {'; '.join(parts)}: delete or move those first."


_EFFECTS: dict[Any, str] = {
    models.PROTECT: Effect.BLOCKS,
    models.RESTRICT: Effect.BLOCKS,
    models.CASCADE: Effect.DELETED,
    models.SET_NULL: Effect.UNLINKED,
    models.SET_DEFAULT: Effect.UNLINKED,
}


def dependents_of(obj: models.Model) -> Dependents:
    """Every reverse relation of ``obj`` with rows, in the model's declaration order."""
    rows = []
    relations = [
        field
        for field in obj._meta.get_fields(include_hidden=True)  # quota rows name a flavor with related_name "+"
        if isinstance(field, ForeignObjectRel) and (field.one_to_many or field.one_to_one)
    ]
    for relation in relations:
        if relation.on_delete not in _EFFECTS:  # DO_NOTHING: bookkeeping without a constraint
            continue
        related = relation.related_model
        queryset = related._base_manager.filter(**{relation.field.name: obj})
        workload = _workload_field(related)
        count = queryset.values(workload).distinct().count() if workload else queryset.count()
        if not count:
            continue
        effect = _EFFECTS[relation.on_delete]
        admitted = _admitted(related, queryset, workload)
        names = _names(related, queryset, workload) if effect == Effect.BLOCKS else []
        label = related._meta.verbose_name_plural if count != 1 else related._meta.verbose_name
        if workload:  # rows of workloads (their resources placed on a flavor): count the workloads
            label = "workloads placed on it" if count != 1 else "workload placed on it"
        rows.append(Dependent(label=str(label), count=count, effect=effect, admitted=admitted, names=names))
    if isinstance(obj, Cohort):
        # Its ClusterQueues refuse the delete already; say how much running work sits under it.
        admitted = Workload.objects.filter(cluster_queue__cohort=obj, state=WorkloadState.ADMITTED).count()
        if admitted:
            rows.append(Dependent("admitted workloads in its ClusterQueues", admitted, Effect.BLOCKS, admitted))
    return Dependents(rows)


def _workload_field(model: type[models.Model]) -> str | None:
    """The foreign key of a workload's own rows (its resources) to their workload, if any."""
    return next((f.name for f in model._meta.concrete_fields if f.is_relation and f.related_model is Workload), None)


def _admitted(model: type[models.Model], queryset: models.QuerySet, workload: str | None) -> int:
    if model is Workload:
        return queryset.filter(state=WorkloadState.ADMITTED).count()
    if workload:
        return queryset.filter(**{f"{workload}__state": WorkloadState.ADMITTED}).values(workload).distinct().count()
    return 0


_OWNERS = ("cluster_queue", "cohort", "namespace")  # what a quota row belongs to


def _names(model: type[models.Model], queryset: models.QuerySet, workload: str | None) -> list[str]:
    """Up to ``NAMED`` rows as people name them: workloads as namespace/name, admitted first;
    quota rows as their owner and resource; anything else as its ``str``."""
    if model is Workload or workload:
        ids = queryset.values_list(workload or "pk", flat=True).distinct()
        rows = Workload.objects.filter(pk__in=ids).select_related("namespace")
        return [str(row) for row in rows.order_by("state", "pk")[:NAMED]]  # "Admitted" sorts before the rest
    owner = next((f.name for f in model._meta.concrete_fields if f.is_relation and f.name in _OWNERS), None)
    if owner is not None and model.__name__.endswith("Quota"):
        return [
            f"{getattr(row, owner)} {row.resource}" for row in queryset.select_related(owner).order_by("pk")[:NAMED]
        ]
    return [str(row) for row in queryset.order_by("pk")[:NAMED]]
