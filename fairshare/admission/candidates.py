"""Pending workloads grouped the way a pass consumes them: per LocalQueue, per class, in order.

A *class* is what the planner's "once failed, fails again" rule is keyed on: the requests, plus
the priority where the ClusterQueue may preempt (who may be preempted depends on it), the
timestamp under ``LowerOrNewerEqualPriority``, and the LocalQueue under TimeAware preemption.

``plan`` builds this grouping from the snapshot on every pass. A caller that runs many passes
over a slowly changing queue (the simulator) keeps a ``PendingIndex`` up to date instead and
hands it to ``plan``, so a pass costs what it decides, not what waits.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from fairshare.quota.scopes import cohort_chains, queue_scope
from fairshare.types import (
    PREEMPT_EXCEED_WEIGHT,
    PREEMPT_LOWER_OR_NEWER_EQUAL,
    TIME_AWARE,
    ClusterQueue,
    Snapshot,
    Workload,
)

order_key = attrgetter("order")
_shape = attrgetter("shape_key")
_shape_priority = attrgetter("shape_priority")

ClassFunction = Callable[[Workload], Any]


def class_flags(queue: ClusterQueue, mode: str) -> tuple[bool, bool, bool]:
    """(by priority, by timestamp, by LocalQueue): what besides requests a class depends on.

    TimeAware reclaim and ExceedWeight preemption depend on the preemptor's LocalQueue (its
    share against its fair share or weight).
    """
    preemption = queue.preemption
    return (
        preemption.enabled,
        preemption.within_cluster_queue == PREEMPT_LOWER_OR_NEWER_EQUAL,
        preemption.enabled and (mode == TIME_AWARE or preemption.within_cluster_queue == PREEMPT_EXCEED_WEIGHT),
    )


def class_function(flags: tuple[bool, bool, bool], local_queue: str) -> ClassFunction:
    """The class of a LocalQueue's candidates (attribute lookups in the common cases)."""
    by_priority, by_time, by_queue = flags
    if not by_priority:
        return _shape
    if not by_time and not by_queue:
        return _shape_priority
    queue_part = local_queue if by_queue else None

    def class_of(workload: Workload) -> tuple:
        return (workload.shape_key, workload.priority, workload.queued_at if by_time else None, queue_part)

    return class_of


class PendingIndex:
    """Pending workloads of a fixed cluster layout, per LocalQueue and class, each list in order.

    Build it from a snapshot (its queues decide the classes), then ``add`` and ``remove``
    workloads as they are submitted, admitted and evicted. The lists must not be changed
    elsewhere; ``plan`` only reads them.
    """

    def __init__(self, snapshot: Snapshot) -> None:
        cohorts = {c.name: c for c in snapshot.cohorts}
        chains = cohort_chains(cohorts)
        queues = {q.name: q for q in snapshot.cluster_queues}
        self._class_of: dict[str, ClassFunction] = {}
        for local in snapshot.local_queues:
            queue = queues[local.cluster_queue]
            flags = class_flags(queue, queue_scope(queue, cohorts, chains).mode)
            self._class_of[local.key] = class_function(flags, local.key)
        self._lists: dict[str, dict[Any, list[Workload]]] = {key: {} for key in self._class_of}
        self._size = 0

    def add(self, workload: Workload) -> None:
        per_queue = self._lists[workload.local_queue]
        cls = self._class_of[workload.local_queue](workload)
        items = per_queue.get(cls)
        if items is None:
            per_queue[cls] = [workload]
        else:
            insort(items, workload, key=order_key)
        self._size += 1

    def remove(self, workload: Workload) -> None:
        per_queue = self._lists[workload.local_queue]
        cls = self._class_of[workload.local_queue](workload)
        items = per_queue[cls]
        index = bisect_left(items, workload.order, key=order_key)
        if index >= len(items) or items[index].key != workload.key:
            raise KeyError(workload.key)
        del items[index]
        if not items:
            del per_queue[cls]
        self._size -= 1

    def classes(self, local_queue: str) -> dict[Any, list[Workload]]:
        """The LocalQueue's pending workloads per class (read only)."""
        return self._lists.get(local_queue, {})

    def local_queues(self) -> list[str]:
        return [key for key, per_queue in self._lists.items() if per_queue]

    def __len__(self) -> int:
        return self._size
