"""One ledger over two real Slurm clusters of different versions (issue 27).

Tenant X's job really runs on Slurm 22.05 (imported held, admitted, released, ended at the
times 22.05's sacct records); the usage sampler sees it; then X and Y (the same weight) each
have a held job on Slurm 24.11 with room for one, X's submitted first: Y's is released first.
A budget on X's namespace is charged exactly what 22.05's accounting says the job ran.

The ClusterQueue spans both clusters with one resource group (22.05's flavor first), and a
third tenant's long job holds 22.05's flavor while the 24.11 jobs are decided, so the only room
is on 24.11. Only this module's jobs (job name ``fp-ledger``) are ever cancelled: the local
Slurms are shared with the other tests.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from decimal import Decimal

import pytest

from budgets import services as budget_services
from budgets.models import Budget, BudgetCharge
from fairshare.policy import FairSharingPolicy
from fairshare.quantities import parse_millis
from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.backends.slurm import jobs as slurm_jobs
from queues.models import (
    AdmissionMode,
    Cluster,
    ClusterQueue,
    ClusterQueueQuota,
    LocalQueue,
    Namespace,
    ResourceFlavor,
    Workload,
    WorkloadState,
)
from queues.services import cluster as cluster_service
from queues.services import usage
from tests.queues.backends.slurm_cluster import epoch, plain, wait_for
from tests.queues.backends.test_slurm_clusters import Side, open_sides

pytestmark = [pytest.mark.slurm, pytest.mark.django_db(transaction=True)]

POLICY = FairSharingPolicy.from_mapping({"usageHalfLifeTime": "1h", "resetInactivityPeriod": "1d"})


@pytest.fixture
def sides() -> Iterator[tuple[Side, Side]]:
    with open_sides(Side, job_name="fp-ledger") as both:
        yield both


def spanning_queue(on_old: Cluster, on_new: Cluster) -> ClusterQueue:
    cq = ClusterQueue.objects.create(name="spans", admission_mode=AdmissionMode.USAGE_BASED)
    for order, (name, on) in enumerate((("old-cpu", on_old), ("new-cpu", on_new))):
        flavor = ResourceFlavor.objects.create(name=name, cluster=on)
        for resource, amount in (("cpu", "1"), ("memory", "4Gi")):
            ClusterQueueQuota.objects.create(
                cluster_queue=cq, flavor=flavor, resource=resource, nominal=parse_millis(amount), flavor_order=order
            )
    return cq


def run_pass(cq: ClusterQueue) -> list[str]:
    return admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.id).key, policy=POLICY).admitted


def workload_of(cluster: Cluster, job_id: str) -> Workload:
    return Workload.objects.select_related("cluster").get(cluster_job__cluster=cluster, cluster_job__external_id=job_id)


def test_given_x_ran_on_slurm_2205_then_y_goes_first_on_slurm_2411_and_xs_budget_is_charged_sacct_time(sides, settings):
    old, new = sides
    settings.CLUSTER_BACKEND = "simulated"
    on_old = Cluster.objects.create(name="slurm-2205", backend="slurm", slurm_bin_dir=old.bin_dir, slurm_conf=old.conf)
    on_new = Cluster.objects.create(name="slurm-2411", backend="slurm", slurm_bin_dir=new.bin_dir, slurm_conf=new.conf)
    cq = spanning_queue(on_old, on_new)
    for team in ("team-x", "team-y", "team-z"):
        LocalQueue.objects.create(namespace=Namespace.objects.create(name=team), name="main", cluster_queue=cq)
    budget = Budget(name="team-x-wall", namespace=Namespace.objects.get(name="team-x"), allocated_hours=Decimal(10))
    budget.full_clean()
    budget.save()
    usage.sample_usage(policy=POLICY)  # the ledger's clock starts
    # Slurm's times are whole seconds: a job started in the second the clock started would begin
    # before it by Slurm's account, and the budget rightly charges only from its own start
    time.sleep(1.1)

    # X's job really runs on 22.05, and the sampler sees it running
    x_old = old.sbatch("team-x/main", seconds=5)
    assert len(cluster_service.sync_cluster(cluster=on_old).imported) == 1
    assert run_pass(cq) == [f"team-x/slurm-2205-j{x_old}"]
    assert workload_of(on_old, x_old).cluster == on_old
    wait_for(lambda: cluster_service.sync_cluster(cluster=on_old).started, timeout=30, every=0.5)
    usage.sample_usage(policy=POLICY)

    def x_finished() -> bool:
        cluster_service.sync_cluster(cluster=on_old)
        return workload_of(on_old, x_old).state == WorkloadState.FINISHED

    wait_for(x_finished, timeout=60, every=1)
    usage.sample_usage(policy=POLICY)
    x_queue, y_queue = (
        LocalQueue.objects.get(namespace__name="team-x"),
        LocalQueue.objects.get(namespace__name="team-y"),
    )
    assert x_queue.consumed_resources["cpu"] > 0 and y_queue.consumed_resources == {}

    # Z holds 22.05's flavor; then X and Y each want the one slot left, on 24.11, X first
    z_old = old.sbatch("team-z/main", seconds=120)
    cluster_service.sync_cluster(cluster=on_old)
    assert run_pass(cq) == [f"team-z/slurm-2205-j{z_old}"]
    x_new = new.sbatch("team-x/main", seconds=2)
    time.sleep(1.1)  # Slurm's submit times have whole seconds: X's is strictly earlier
    y_new = new.sbatch("team-y/main", seconds=2)
    assert len(cluster_service.sync_cluster(cluster=on_new).imported) == 2

    assert run_pass(cq) == [f"team-y/slurm-2411-j{y_new}"]

    assert workload_of(on_new, y_new).cluster == on_new and workload_of(on_new, x_new).state == WorkloadState.PENDING
    wait_for(lambda: (new.job(y_new) or {}).get("job_state") in ("RUNNING", "COMPLETED"), timeout=30)
    assert (new.job(x_new) or {}).get("job_state") == "PENDING"  # still held
    # X's budget: exactly the seconds 22.05's accounting says its job ran
    record = next(
        job for job in _accounting(old, x_old) if job["state"]["current"] == "COMPLETED" and job["time"]["end"]
    )
    budget_services.reconcile_budget(budget.pk)
    charged = sum(BudgetCharge.objects.filter(budget=budget).values_list("unit_seconds", flat=True))
    assert charged == Decimal((epoch(record["time"]["end"]) - epoch(record["time"]["start"])).total_seconds())


def _accounting(side: Side, job_id: str) -> list[dict]:
    document = json.loads(side.run("sacct", "--json", "-X", "-S", "1970-01-01", "-j", job_id))
    return [plain(job) for job in slurm_jobs.accounting_jobs(document) if str(job["job_id"]) == job_id]
