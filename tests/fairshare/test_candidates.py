"""PendingIndex: grouped pending work kept up to date gives the same decisions as the snapshot."""

from __future__ import annotations

import pytest

from fairshare.admission.candidates import PendingIndex
from fairshare.admission.planner import plan
from fairshare.types import USAGE_BASED
from tests.fairshare.builders import cq, lq, snapshot, wl


def layout_and_work():
    queues = [cq("cq", cpu=5, mode=USAGE_BASED, within="LowerPriority")]
    locals_ = [lq("a/q", "cq"), lq("b/q", "cq", weight=2)]
    pending = [wl(f"a{i}", "a/q", cpu=1 + i % 3, priority=i % 2, t=i) for i in range(8)]
    pending += [wl(f"b{i}", "b/q", cpu=2, t=10 + i) for i in range(5)]
    running = [wl("run", "a/q", cpu=1, admitted=True, cluster_queue="cq")]
    return queues, locals_, pending, running


def test_a_pass_over_an_index_decides_like_a_pass_over_the_snapshot():
    queues, locals_, pending, running = layout_and_work()
    full = snapshot(queues, locals_, pending + running)
    index = PendingIndex(full)
    for workload in reversed(pending):  # any insertion order
        index.add(workload)
    with_index = plan(snapshot(queues, locals_, running), 0.0, reasons=False, pending=index)
    without = plan(full, 0.0, reasons=False)
    assert with_index.admissions == without.admissions
    assert with_index.evictions == without.evictions


def test_lists_stay_in_queue_order_and_removal_takes_the_right_workload():
    queues, locals_, pending, _ = layout_and_work()
    index = PendingIndex(snapshot(queues, locals_, pending))
    for workload in pending:
        index.add(workload)
    index.remove(pending[2])
    assert len(index) == len(pending) - 1
    for per_class in index.classes("a/q").values():
        assert [w.order for w in per_class] == sorted(w.order for w in per_class)
    assert all(pending[2].key != w.key for ws in index.classes("a/q").values() for w in ws)
    with pytest.raises(KeyError):
        index.remove(pending[2])


def test_an_index_is_only_for_passes_without_reasons():
    queues, locals_, _pending, _ = layout_and_work()
    s = snapshot(queues, locals_, [])
    with pytest.raises(ValueError):
        plan(s, 0.0, pending=PendingIndex(s))
