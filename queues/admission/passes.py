"""The admission pass: lock a unit, then load -> plan -> apply, each step one module, crossed once.

``load`` reads the unit's rows into an engine snapshot (``admission.load``), the gates hold
some pending workloads back (``admission.gates``), the engine plans
(``fairshare.admission.planner.plan``), and one writer stores the plan and the gated reasons
(``admission.apply``). Data flows down only: no step calls back into another.

The engine explains the first ``ADMISSION_EXPLAINED_PER_QUEUE`` waiting workloads of each
ClusterQueue in full and the later ones that wait for quota by reference to the queue's head
(``plan(..., explain_first=...)``), so an admission does not change thousands of stored reasons.

The engine's plan is a function of the snapshot alone (``now`` is only recorded in
``Plan.now``; ``tests/fairshare`` checks it), so a process that plans a unit whose snapshot
equals the one it planned last time reuses that plan (``_planned``): an idle pass, where nothing
changed, costs the load and the comparison, not the engine. Equal snapshots share most of their
objects (``admission.load`` keeps what it read per unit), so the comparison is mostly identity.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from fairshare.admission.planner import plan as plan_admissions
from fairshare.policy import FairSharingPolicy
from fairshare.types import Plan, Snapshot
from queues import metrics
from queues.admission import apply, gates, load
from queues.locks import advisory_xact_lock, advisory_xact_locks
from queues.models import LocalQueue
from queues.services import cluster

logger = logging.getLogger(__name__)


@dataclass
class PassResult:
    unit: str
    admitted: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    pending: int = 0
    seconds: float = 0.0
    backed_off: bool = False  # no cluster of its flavors answers: nothing was decided


def run_admission_pass(
    unit_key: str, *, now: datetime | None = None, policy: FairSharingPolicy | None = None
) -> PassResult:
    """One pass over one unit, in one transaction: all its decisions land, or none do.

    Flavors of a cluster that does not answer (or is disabled) are unavailable to this pass:
    work that fits only them waits and says why, the rest is decided as usual. When every
    flavor of the unit is unavailable the pass decides nothing (``backed_off``), as it did
    when there was one cluster.
    """
    started = time.perf_counter()
    policy = policy or settings.FAIR_SHARING
    unit = load.unit_by_key(unit_key)
    if unit is None:
        return PassResult(unit=unit_key)
    unavailable = cluster.unavailable_flavors()  # one query, as the reachability check before it
    with transaction.atomic():
        advisory_xact_lock(f"admission:{unit.key}")
        # Namespace hard quotas span units: lock the unit's namespaces too, always in name order.
        namespaces = sorted(
            set(
                LocalQueue.objects.filter(cluster_queue_id__in=unit.cluster_queue_ids).values_list(
                    "namespace__name", flat=True
                )
            )
        )
        advisory_xact_locks([f"namespace:{namespace}" for namespace in namespaces])
        moment = now or timezone.now()
        loaded = load.build_snapshot(unit, policy, unavailable_flavors=unavailable)  # load
        if unavailable and loaded.snapshot.flavors and set(loaded.snapshot.flavors) <= unavailable:
            return PassResult(unit=unit.key, backed_off=True)  # nothing written: no cluster to decide for
        gated = gates.apply_gates(loaded, moment)  # per-workload vetoes (budgets' safe admission)
        decisions = _planned(unit.key, loaded.snapshot, moment.timestamp())  # plan (epoch seconds)
        applied = apply.apply_plan(loaded, decisions, moment, gated=gated)  # apply: the plan, then the gated reasons
        claimed = set(applied.admitted)
        load.remember_pass(loaded, (a for a in decisions.admissions if a.workload in claimed))
        # The cluster hears of the decisions once they are committed (a crash before that: the
        # next sync repairs it); one batch per pass, evictions first to free the capacity.
        admitted_ids = [loaded.workload_ids[key] for key in applied.admitted]
        evicted_ids = [loaded.workload_ids[key] for key in applied.evicted]
        transaction.on_commit(partial(cluster.dispatch_decisions, admitted_ids, evicted_ids, clusters=applied.clusters))
    result = PassResult(
        unit=unit.key,
        admitted=applied.admitted,
        evicted=applied.evicted,
        skipped=applied.skipped,
        pending=applied.pending,
        seconds=time.perf_counter() - started,
    )
    _observe(decisions, result, loaded.workload_ids, moment)
    if result.admitted or result.evicted:
        logger.info(
            "admission pass %s: admitted %d, evicted %d, pending %d in %.3fs",
            unit.key,
            len(result.admitted),
            len(result.evicted),
            result.pending,
            result.seconds,
        )
    return result


# Per process: unit key -> the snapshot this process planned last for it, the ``explain_first``
# it planned with, and the plan. Replaced by every pass of the unit; a worker's restart forgets
# it (``forget_plans`` too). Never stale: a hit needs an equal snapshot.
_PLANS: dict[str, tuple[Snapshot, int | None, Plan]] = {}


def _planned(unit_key: str, snapshot: Snapshot, now: float) -> Plan:
    """The engine's plan of ``snapshot`` at ``now``: the previous plan of this unit in this
    process, re-dated, when its snapshot and ``explain_first`` equal this one's; else a new one."""
    explain_first = settings.ADMISSION_EXPLAINED_PER_QUEUE
    previous = _PLANS.get(unit_key)
    if previous is not None and previous[1] == explain_first and previous[0] == snapshot:
        _PLANS[unit_key] = (snapshot, explain_first, previous[2])
        return dataclasses.replace(previous[2], now=now)
    decisions = plan_admissions(snapshot, now, explain_first=explain_first)
    _PLANS[unit_key] = (snapshot, explain_first, decisions)
    return decisions


def forget_plans() -> None:
    """Forget the plans this process made (the next pass of every unit plans afresh)."""
    _PLANS.clear()


def _observe(decisions: Plan, result: PassResult, workload_ids: dict[str, int], moment: datetime) -> None:
    """Prometheus instruments (``metrics.observe_pass``): pass duration, admissions with their
    wait and evictions per ClusterQueue (the admission mode as the planner resolved it)."""
    admitted, evicted = set(result.admitted), set(result.evicted)
    metrics.observe_pass(
        unit=result.unit,
        seconds=result.seconds,
        now=moment,
        admitted=[
            (admission.cluster_queue, decisions.modes[admission.cluster_queue], workload_ids[admission.workload])
            for admission in decisions.admissions
            if admission.workload in admitted
        ],
        evicted=[(e.cluster_queue, e.code) for e in decisions.evictions if e.workload in evicted],
        pending=result.pending,
    )


# Per process: unit key -> when the last pass of that unit this process completed started (the
# database's clock, read before the pass read anything).
_ANSWERED: dict[str, int] = {}


def run_requested_pass(unit_key: str, requested: int | None = None) -> PassResult | None:
    """A pass asked for by a request sent at ``requested`` (the database's clock, read after the
    change that asked for it committed: ``queues.services.pass_requests``), or None when a pass
    of this process that started later has answered it (it read after that commit). One query
    more than the pass on PostgreSQL (its start on the database's clock), none when skipped."""
    answered = _ANSWERED.get(unit_key)
    if requested is not None and answered is not None and requested < answered:
        return None
    started = load.database_clock()  # before the pass reads anything
    result = run_admission_pass(unit_key)
    if started is not None and not result.backed_off:
        _ANSWERED[unit_key] = max(started, answered or started)
    return result


def run_all_admission_passes(*, now: datetime | None = None) -> list[PassResult]:
    """Every unit in turn (used by the CLI and tests; Celery fans out one task per unit)."""
    return [run_admission_pass(unit.key, now=now) for unit in load.admission_units()]
