"""Victim selection: the smallest set of running workloads whose eviction lets a preemptor fit.

The planner decides who may be preempted and in which order (see ``admission.preemption_rules``); this
module only finds the set, Kueue's way: take candidates in order until the preemptor fits,
then give back every victim that turns out not to be needed (latest taken first). If the
preemptor still does not fit with every candidate gone, nobody is evicted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from fairshare.quota.quota import FlavorResource
from fairshare.types import PREEMPT_LOWER_OR_NEWER_EQUAL, PREEMPT_LOWER_PRIORITY, Workload

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Running:
    """An admitted workload as the planner tracks it during a pass."""

    workload: Workload
    local_queue: str
    namespace: str
    cluster_queue: str
    amounts: Mapping[FlavorResource, int]
    admitted_at: float


def find_victims(
    candidates: list[Running],
    fits: Callable[[], T | None],
    release: Callable[[Running], None],
    restore: Callable[[Running], None],
    still_eligible: Callable[[Running], bool] | None = None,
) -> tuple[T, list[Running]] | None:
    """Release candidates in order until ``fits()`` returns a result, then minimise the set.

    ``release``/``restore`` take a candidate's usage out of / back into the working state.
    ``still_eligible`` is asked before each release (a ClusterQueue that stopped borrowing is
    no longer a reclaim target). On success the victims stay released and
    ``(fits() result, victims in eviction order)`` is returned; on failure the state is as
    before.
    """
    chosen: list[Running] = []
    result: T | None = None
    for candidate in candidates:
        if still_eligible is not None and not still_eligible(candidate):
            continue
        release(candidate)
        chosen.append(candidate)
        result = fits()
        if result is not None:
            break
    if result is None:
        for candidate in reversed(chosen):
            restore(candidate)
        return None
    kept: list[Running] = []
    for candidate in reversed(chosen):
        restore(candidate)
        if fits() is not None:
            continue
        release(candidate)
        kept.append(candidate)
    kept.reverse()
    final = fits()
    assert final is not None  # the state is one that fitted
    return final, kept


def may_preempt(policy: str, preemptor: Workload, victim: Workload) -> bool:
    """Kueue's ``withinClusterQueue`` rule: may ``preemptor`` evict ``victim`` under ``policy``?"""
    if policy == PREEMPT_LOWER_PRIORITY:
        return victim.priority < preemptor.priority
    if policy == PREEMPT_LOWER_OR_NEWER_EQUAL:
        return victim.priority < preemptor.priority or (
            victim.priority == preemptor.priority and victim.queued_at > preemptor.queued_at
        )
    return False
