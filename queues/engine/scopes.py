"""Admission scopes: which mode orders whom, and over what capacity.

``admissionScope.admissionMode`` may be set on a ClusterQueue or on any cohort; for a
ClusterQueue the highest node on its path (itself, its cohort, that cohort's parent, ...) with a
mode set wins, as in Kueue. None set means ``NoAdmissionFairSharing``.

A node's children are ordered by fair-share score only when the node is at or below the scope
node of a fair mode; above it (or with no fair mode) they are ordered by their best candidate's
priority, then queue timestamp, then name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from queues.engine.errors import ValidationError
from queues.engine.types import NO_FAIR_SHARING, ClusterQueue, Cohort


@dataclass(frozen=True, slots=True)
class Scope:
    """The winning admission scope of a ClusterQueue or cohort."""

    kind: str  # "cohort" or "clusterQueue"
    name: str
    mode: str

    @property
    def fair(self) -> bool:
        return self.mode != NO_FAIR_SHARING


def cohort_chains(cohorts: Mapping[str, Cohort]) -> dict[str, tuple[str, ...]]:
    """For every cohort, its ancestors from the parent up to the root; rejects cycles."""
    chains: dict[str, tuple[str, ...]] = {}
    for name in cohorts:
        chain: list[str] = []
        seen = {name}
        parent = cohorts[name].parent
        while parent is not None:
            if parent in seen:
                raise ValidationError(f"cohorts.{name}.parent", f"cohort parents form a cycle through {parent!r}")
            seen.add(parent)
            chain.append(parent)
            parent = cohorts[parent].parent if parent in cohorts else None
        chains[name] = tuple(chain)
    return chains


def queue_chain(queue: ClusterQueue, chains: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The cohorts above a ClusterQueue, nearest first."""
    if queue.cohort is None:
        return ()
    return (queue.cohort, *chains.get(queue.cohort, ()))


def cohort_scope(name: str, cohorts: Mapping[str, Cohort], chains: Mapping[str, tuple[str, ...]]) -> Scope | None:
    """The scope a cohort sits in (the highest cohort at or above it with a mode), if any."""
    found: Scope | None = None
    for candidate in (name, *chains.get(name, ())):
        cohort = cohorts.get(candidate)
        if cohort is not None and cohort.admission_mode is not None:
            found = Scope("cohort", candidate, cohort.admission_mode)
    return found


def queue_scope(queue: ClusterQueue, cohorts: Mapping[str, Cohort], chains: Mapping[str, tuple[str, ...]]) -> Scope:
    """The scope of a ClusterQueue: the highest mode on its path, else its own NoAdmissionFairSharing."""
    found = Scope("clusterQueue", queue.name, queue.admission_mode) if queue.admission_mode is not None else None
    for candidate in queue_chain(queue, chains):
        cohort = cohorts.get(candidate)
        if cohort is not None and cohort.admission_mode is not None:
            found = Scope("cohort", candidate, cohort.admission_mode)
    return found or Scope("clusterQueue", queue.name, NO_FAIR_SHARING)
