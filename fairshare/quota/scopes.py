"""Admission scopes: which mode orders whom, and over what capacity.

``admissionScope.admissionMode`` may be set on a ClusterQueue or on any cohort; for a
ClusterQueue the highest node on its path (itself, its cohort, that cohort's parent, ...) with a
mode set wins, as in Kueue. None set means ``NoAdmissionFairSharing``.

A node's children are ordered by fair-share score only when the node is at or below the scope
node of a fair mode; above it (or with no fair mode) they are ordered by their best candidate's
priority, then queue timestamp, then name.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from fairshare.errors import ValidationError
from fairshare.types import NO_FAIR_SHARING, ClusterQueue, Cohort


@dataclass(frozen=True, slots=True)
class Scope:
    """The winning admission scope of a ClusterQueue or cohort."""

    kind: str  # "cohort" or "clusterQueue"
    name: str
    mode: str

    @property
    def fair(self) -> bool:
        return self.mode != NO_FAIR_SHARING


K = TypeVar("K", bound=Hashable)


def ancestry(start: K | None, parent_of: Mapping[K, K | None]) -> tuple[K, ...]:
    """``start`` and the cohorts above it, nearest first: the one walk up the cohort tree.

    Works on any keys (engine names, database ids): ``parent_of`` maps a cohort to its parent
    (None or absent: a root). A cycle ends the walk before a cohort would repeat, so it never
    loops; ``closes_cycle`` tells whether it did.
    """
    chain: list[K] = []
    seen: set[K] = set()
    node = start
    while node is not None and node not in seen:
        seen.add(node)
        chain.append(node)
        node = parent_of.get(node)
    return tuple(chain)


def closes_cycle(chain: tuple[K, ...], parent_of: Mapping[K, K | None]) -> K | None:
    """The cohort where ``chain`` (from ``ancestry``) turned back on itself, if it did."""
    if not chain:
        return None
    last = parent_of.get(chain[-1])
    return last if last is not None and last in chain else None


def cohort_chains(cohorts: Mapping[str, Cohort]) -> dict[str, tuple[str, ...]]:
    """For every cohort, its ancestors from the parent up to the root; rejects cycles."""
    parent_of = {name: cohort.parent for name, cohort in cohorts.items()}
    chains: dict[str, tuple[str, ...]] = {}
    for name in cohorts:
        chain = ancestry(name, parent_of)
        cycle = closes_cycle(chain, parent_of)
        if cycle is not None:
            raise ValidationError(f"cohorts.{name}.parent", f"cohort parents form a cycle through {cycle!r}")
        chains[name] = chain[1:]
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


N = TypeVar("N")


def highest_mode(path: Iterable[tuple[N, str | None]]) -> tuple[N, str] | None:
    """The highest node with a mode set on a path (the ClusterQueue first, then its cohorts up
    to the root), and that mode: the rule "the highest scope wins". None when none is set.

    Works on any node keys (engine names, database ids); a mode is set when it is not None.
    """
    found: tuple[N, str] | None = None
    for node, mode in path:
        if mode is not None:
            found = (node, mode)
    return found


def queue_scope(queue: ClusterQueue, cohorts: Mapping[str, Cohort], chains: Mapping[str, tuple[str, ...]]) -> Scope:
    """The scope of a ClusterQueue: the highest mode on its path, else its own NoAdmissionFairSharing."""
    path: list[tuple[tuple[str, str], str | None]] = [(("clusterQueue", queue.name), queue.admission_mode)]
    for candidate in queue_chain(queue, chains):
        cohort = cohorts.get(candidate)
        path.append((("cohort", candidate), cohort.admission_mode if cohort is not None else None))
    found = highest_mode(path)
    if found is None:
        return Scope("clusterQueue", queue.name, NO_FAIR_SHARING)
    (kind, name), mode = found
    return Scope(kind, name, mode)
