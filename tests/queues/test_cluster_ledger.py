"""One ledger over several clusters (issue 27): usage, TimeAware history, entry penalties and
budgets count work on every cluster, through the control loop's own services (cluster syncs,
usage sampler, admission pass, budget accounting) at chosen moments.

The clusters here are two simulated ``Cluster`` rows, ``alpha`` and ``beta``: a ClusterQueue
whose one resource group holds a flavor on each (Kueue's flavor order: ``on-alpha`` first) places
a workload on ``beta`` only when ``alpha`` is full. ``test_slurm_cluster_ledger.py`` does the same
with jobs that really ran on Slurm 22.05 and 24.11.

The shape of every ordering test: tenant X (namespace ``team-x``) runs on alpha; then X and Y
(``team-y``, the same weight) each want the one free slot, which is on beta, X asking first;
Y goes first because of what X used on alpha.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from budgets import services as budget_services
from budgets.models import Budget, BudgetCharge
from fairshare.policy import FairSharingPolicy
from fairshare.quantities import parse_millis
from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.models import (
    AdmissionMode,
    Cluster,
    ClusterQueue,
    ClusterQueueQuota,
    LocalQueue,
    QueueHold,
    ResourceFlavor,
    Workload,
    WorkloadState,
)
from queues.services import cluster as cluster_service
from queues.services import usage
from tests.budgets.helpers import T0, at
from tests.queues.loop_fixtures import make_local_queue, submit

pytestmark = pytest.mark.django_db

POLICY = FairSharingPolicy.from_mapping(
    {"usageHalfLifeTime": "1h", "resetInactivityPeriod": "1d", "usageWindow": {"size": "10h"}}
)


def clusters() -> tuple[Cluster, Cluster]:
    return (
        Cluster.objects.create(name="alpha", backend="simulated"),
        Cluster.objects.create(name="beta", backend="simulated"),
    )


def spanning_queue(mode: str, alpha: Cluster, beta: Cluster, *, cpu: str = "1") -> ClusterQueue:
    """One resource group (cpu) over a flavor on alpha, then one on beta, ``cpu`` each."""
    cq = ClusterQueue.objects.create(name="shared", admission_mode=mode)
    for order, (flavor, on) in enumerate((("on-alpha", alpha), ("on-beta", beta))):
        ClusterQueueQuota.objects.create(
            cluster_queue=cq,
            flavor=ResourceFlavor.objects.create(name=flavor, cluster=on),
            resource="cpu",
            nominal=parse_millis(cpu),
            flavor_order=order,
        )
    return cq


def single_cluster_queue(name: str, on: Cluster, cpu: str = "1") -> ClusterQueue:
    cq = ClusterQueue.objects.create(name=name, admission_mode=AdmissionMode.USAGE_BASED)
    ClusterQueueQuota.objects.create(
        cluster_queue=cq,
        flavor=ResourceFlavor.objects.create(name=f"{name}-cpu", cluster=on),
        resource="cpu",
        nominal=parse_millis(cpu),
    )
    return cq


def run_pass(cq: ClusterQueue, now):
    return admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.id).key, now=now, policy=POLICY)


def placed(workload: Workload) -> tuple[str, str | None]:
    workload.refresh_from_db()
    return workload.state, workload.cluster.name if workload.cluster_id else None


def tenants(cq: ClusterQueue) -> tuple[LocalQueue, LocalQueue]:
    return make_local_queue("team-x", "main", cq), make_local_queue("team-y", "main", cq)


def both_ask_for_beta(lq_x: LocalQueue, lq_y: LocalQueue) -> tuple[Workload, Workload]:
    """X asks first (earlier queue time): without a ledger, FIFO would put X first."""
    return submit(lq_x, "x-next", duration=3600), submit(lq_y, "y-next", duration=3600)


# --- (a) decayed usage ----------------------------------------------------------------------


def test_given_x_used_alpha_when_sampled_then_y_goes_first_on_beta_usage_based():
    alpha, beta = clusters()
    cq = spanning_queue(AdmissionMode.USAGE_BASED, alpha, beta)
    lq_x, lq_y = tenants(cq)
    usage.sample_usage(now=at(minutes=-1), policy=POLICY)  # the ledger's clock starts
    x_run = submit(lq_x, "x-run", duration=4 * 3600)
    assert run_pass(cq, at()).admitted == ["team-x/x-run"]
    assert placed(x_run) == (WorkloadState.ADMITTED, "alpha")
    for minutes in (30, 60):  # the sampler sees X's work on alpha
        usage.sample_usage(now=at(minutes=minutes), policy=POLICY)
        cluster_service.sync_cluster(now=at(minutes=minutes))  # nothing is due yet on either cluster
    lq_x.refresh_from_db()
    lq_y.refresh_from_db()
    assert lq_x.consumed_resources["cpu"] > 0 and lq_x.entry_penalty == {}  # usage, no penalty left
    assert lq_y.consumed_resources == {}
    x_next, y_next = both_ask_for_beta(lq_x, lq_y)

    result = run_pass(cq, at(minutes=61))

    assert result.admitted == ["team-y/y-next"]
    assert placed(y_next) == (WorkloadState.ADMITTED, "beta")
    assert placed(x_next) == (WorkloadState.PENDING, None)


def test_given_x_used_alpha_and_finished_there_then_its_history_still_orders_beta():
    """The usage outlives the work: X's job on alpha ended, a third tenant fills alpha, and the
    decayed usage X left behind still puts Y first on beta."""
    alpha, beta = clusters()
    cq = spanning_queue(AdmissionMode.USAGE_BASED, alpha, beta)
    lq_x, lq_y = tenants(cq)
    lq_z = make_local_queue("team-z", "main", cq)
    usage.sample_usage(now=at(minutes=-1), policy=POLICY)
    x_run = submit(lq_x, "x-run", duration=3600)
    run_pass(cq, at())
    usage.sample_usage(now=at(minutes=30), policy=POLICY)
    assert cluster_service.sync_cluster(cluster=alpha, now=at(minutes=61)).finished == [x_run.pk]  # alpha's clock
    usage.sample_usage(now=at(minutes=62), policy=POLICY)
    submit(lq_z, "z-fills-alpha", duration=4 * 3600)
    assert run_pass(cq, at(minutes=63)).admitted == ["team-z/z-fills-alpha"]
    x_next, y_next = both_ask_for_beta(lq_x, lq_y)

    result = run_pass(cq, at(minutes=64))

    assert placed(Workload.objects.get(name="z-fills-alpha")) == (WorkloadState.ADMITTED, "alpha")
    assert result.admitted == ["team-y/y-next"]
    assert placed(y_next) == (WorkloadState.ADMITTED, "beta") and placed(x_next)[0] == WorkloadState.PENDING
    lq_x.refresh_from_db()
    assert lq_x.consumed_resources["cpu"] > 0  # what it ran on alpha, decayed


def test_given_x_ran_on_alpha_then_timeaware_history_puts_y_first_on_beta():
    """KAI time-aware fairness as modelled here: the LocalQueue's windowed history (the usage
    series the sampler writes) is X's work on alpha; with no live allocation apart (X's job is
    over, Z holds alpha) the history alone orders beta."""
    alpha, beta = clusters()
    cq = spanning_queue(AdmissionMode.TIME_AWARE, alpha, beta)
    lq_x, lq_y = tenants(cq)
    lq_z = make_local_queue("team-z", "main", cq)
    x_run = submit(lq_x, "x-run", duration=3 * 3600)
    usage.sample_usage(now=at(), policy=POLICY)
    assert run_pass(cq, at()).admitted == ["team-x/x-run"]
    for hours in (1, 2, 3):
        cluster_service.sync_cluster(now=at(hours=hours))
        usage.sample_usage(now=at(hours=hours), policy=POLICY)
    assert placed(x_run)[0] == WorkloadState.FINISHED  # alpha's clock ended it at 3h
    lq_x.refresh_from_db()
    lq_y.refresh_from_db()
    assert lq_x.historical_share["cpu"] > 0 and lq_y.historical_share == {}
    submit(lq_z, "z-fills-alpha", duration=4 * 3600)
    assert run_pass(cq, at(hours=3, minutes=1)).admitted == ["team-z/z-fills-alpha"]
    x_next, y_next = both_ask_for_beta(lq_x, lq_y)

    result = run_pass(cq, at(hours=3, minutes=2))

    assert result.admitted == ["team-y/y-next"]
    assert placed(y_next) == (WorkloadState.ADMITTED, "beta") and placed(x_next)[0] == WorkloadState.PENDING


# --- (c) entry penalties -------------------------------------------------------------------


def test_given_x_admitted_on_alpha_then_its_entry_penalty_orders_beta_before_any_sample():
    alpha, beta = clusters()
    cq = spanning_queue(AdmissionMode.USAGE_BASED, alpha, beta)
    lq_x, lq_y = tenants(cq)
    usage.sample_usage(now=at(minutes=-1), policy=POLICY)
    submit(lq_x, "x-run", duration=3600)
    run_pass(cq, at())
    lq_x.refresh_from_db()
    assert lq_x.entry_penalty["cpu"] > 0 and lq_x.consumed_resources == {}  # only the penalty so far
    x_next, y_next = both_ask_for_beta(lq_x, lq_y)

    result = run_pass(cq, at(seconds=5))  # no sample in between

    assert result.admitted == ["team-y/y-next"]
    assert placed(y_next) == (WorkloadState.ADMITTED, "beta") and placed(x_next)[0] == WorkloadState.PENDING
    lq_y.refresh_from_db()
    assert lq_y.entry_penalty["cpu"] == lq_x.entry_penalty["cpu"]  # beta's admission adds the same penalty


def test_given_penalties_from_both_clusters_then_the_sample_folds_them_into_one_usage():
    alpha, beta = clusters()
    cq = spanning_queue(AdmissionMode.USAGE_BASED, alpha, beta)
    lq_x, _ = tenants(cq)
    usage.sample_usage(now=at(minutes=-1), policy=POLICY)
    on_alpha, on_beta = submit(lq_x, "a", duration=3600), submit(lq_x, "b", duration=3600)
    run_pass(cq, at())
    assert (placed(on_alpha)[1], placed(on_beta)[1]) == ("alpha", "beta")
    lq_x.refresh_from_db()
    assert lq_x.entry_penalty["cpu"] == pytest.approx(2 * POLICY.sampling_alpha * 1000)  # one cpu on each cluster

    usage.sample_usage(now=at(minutes=1), policy=POLICY)

    lq_x.refresh_from_db()
    assert lq_x.entry_penalty == {}
    assert lq_x.consumed_resources["cpu"] > 0


# --- (b) a budget over two clusters ----------------------------------------------------------


def budget_pair():
    """Namespace team-x has a LocalQueue on each cluster (two ClusterQueues, one cluster each)."""
    alpha, beta = clusters()
    cq_alpha, cq_beta = single_cluster_queue("cq-alpha", alpha, "2"), single_cluster_queue("cq-beta", beta, "2")
    return (
        (alpha, beta),
        (cq_alpha, cq_beta),
        (
            make_local_queue("team-x", "on-alpha", cq_alpha),
            make_local_queue("team-x", "on-beta", cq_beta),
        ),
    )


def namespace_budget(lq: LocalQueue, hours: str) -> Budget:
    created = Budget(
        name="team-x-cpu",
        namespace=lq.namespace,
        kind=Budget.Kind.RESOURCE_HOURS,
        resource="cpu",
        allocated_hours=Decimal(hours),
        anchor=T0,
    )
    created.full_clean()
    created.save()
    return created


def test_given_work_on_both_clusters_then_one_budget_charges_both_and_forecasts_from_both():
    _, (cq_alpha, cq_beta), (lq_alpha, lq_beta) = budget_pair()
    budget = namespace_budget(lq_alpha, "10")
    on_alpha, on_beta = submit(lq_alpha, "a", duration=2 * 3600), submit(lq_beta, "b", duration=2 * 3600)
    run_pass(cq_alpha, at())
    run_pass(cq_beta, at())
    assert (placed(on_alpha)[1], placed(on_beta)[1]) == ("alpha", "beta")

    result = budget_services.reconcile_budget(budget.pk, now=at(hours=1))

    assert result is not None and result.status is not None
    charged = {
        charge.admission_record.workload.name: charge.unit_seconds
        for charge in BudgetCharge.objects.filter(budget=budget).select_related("admission_record__workload")
    }
    assert charged == {"a": Decimal(3600), "b": Decimal(3600)}  # one cpu-hour on each cluster
    assert result.status.used_hours == Decimal(2)
    # 2 cpu-hours an hour (one per cluster): the 8 left last 4 hours; one cluster alone would say 8
    assert result.status.forecast_exhausted_at == at(hours=5)
    assert result.status.state == "at_risk"


def test_given_a_budget_exhausted_by_both_clusters_then_it_holds_admissions_on_both_saying_why():
    _, (cq_alpha, cq_beta), (lq_alpha, lq_beta) = budget_pair()
    budget = namespace_budget(lq_alpha, "3")
    submit(lq_alpha, "a", duration=3600 * 3 // 2)
    submit(lq_beta, "b", duration=3600 * 3 // 2)
    run_pass(cq_alpha, at())
    run_pass(cq_beta, at())
    cluster_service.sync_cluster(now=at(hours=2))  # each cluster's clock ends its own at 1.5h
    assert set(Workload.objects.values_list("state", flat=True)) == {WorkloadState.FINISHED}

    result = budget_services.reconcile_budget(budget.pk, now=at(hours=2))

    assert result is not None and result.status is not None
    assert result.status.used_hours == Decimal(3)  # 1.5 on alpha + 1.5 on beta: exhausted, neither alone is
    assert result.hold == "placed"
    hold = QueueHold.objects.get(source=f"budget:{budget.pk}")
    assert hold.namespace_id == lq_alpha.namespace_id
    waiting = [submit(lq_alpha, "a-next", duration=60), submit(lq_beta, "b-next", duration=60)]
    results = [run_pass(cq_alpha, at(hours=2, minutes=1)), run_pass(cq_beta, at(hours=2, minutes=1))]
    assert [r.admitted for r in results] == [[], []]  # both clusters have room, both are held
    for workload in waiting:
        workload.refresh_from_db()
        assert workload.state == WorkloadState.PENDING
        assert workload.pending_reason_code == "BudgetExhausted"
        assert workload.pending_reason_message.startswith("budget team-x-cpu exhausted: 3 of 3 CPU-hours used")


def test_given_a_budget_on_a_queue_spanning_clusters_then_work_on_either_cluster_is_charged_once():
    alpha, beta = clusters()
    cq = spanning_queue(AdmissionMode.USAGE_BASED, alpha, beta)
    lq_x, _ = tenants(cq)
    budget = Budget(name="shared-wall", cluster_queue=cq, allocated_hours=Decimal(100), anchor=T0)
    budget.full_clean()
    budget.save()
    a, b = submit(lq_x, "a", duration=1800), submit(lq_x, "b", duration=900)
    run_pass(cq, at())
    assert (placed(a)[1], placed(b)[1]) == ("alpha", "beta")
    cluster_service.sync_cluster(now=at(hours=1))

    for minutes in (61, 62):  # a second run charges nothing new
        budget_services.reconcile_budget(budget.pk, now=at(minutes=minutes))

    assert sorted(BudgetCharge.objects.filter(budget=budget).values_list("unit_seconds", flat=True)) == [
        Decimal(900),
        Decimal(1800),
    ]
    budget.state.refresh_from_db()
    assert budget.state.used_unit_seconds == Decimal(2700)
