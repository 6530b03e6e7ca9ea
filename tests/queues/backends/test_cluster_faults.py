"""A real slurmctld stopped and restarted under one fairportal driving two clusters (issue 27).

The controller that flaps is this module's own small Slurm 22.05 (one node, 4 CPUs), started
once for the session by ``deploy/slurm/local-slurm.sh`` in the test's temporary directory, on its
own ports (the first free base from 9000 + 100 x FP_SLOT), with its own accounting database in the shared MariaDB,
and stopped at the end: the shared daemons other tests use are never touched. The other cluster
is a simulated one (``steady``). Each scenario stops and starts only this slurmctld; every wait
is bounded.

Scenarios: the controller is stopped between the admission pass and the release; it is stopped
while a job runs, which finishes unseen; it dies half-way through a release (after the partition
update, before the release: a ``scontrol`` wrapper stops it at that moment).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.utils import timezone

from budgets import services as budget_services
from budgets.models import Budget, BudgetCharge
from fairshare.quantities import parse_millis
from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.backends.slurm import jobs as slurm_jobs
from queues.models import (
    AdmissionRecord,
    AdmittedUsage,
    BackendHealth,
    Cluster,
    ClusterJob,
    ClusterQueue,
    ClusterQueueQuota,
    LocalQueue,
    Namespace,
    ResourceFlavor,
    Workload,
    WorkloadState,
)
from queues.services import cluster as cluster_service
from queues.services import submit_workload
from tests.queues.backends.slurm_cluster import HARNESS, plain

pytestmark = [pytest.mark.slurm, pytest.mark.django_db(transaction=True)]

JOB_NAME = "fp-fault"


@dataclass
class OwnSlurm:
    """This module's Slurm: its directory, conf and a wrapper bin dir whose ``scontrol`` can kill
    the controller just before a release (``arm_release_crash``)."""

    directory: Path
    wrappers: Path

    @property
    def conf(self) -> str:
        return str(self.directory / "etc" / "slurm.conf")

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": self.conf, "FAIRPORTAL_SLURM_DIR": str(self.directory)}

    def run(self, tool: str, *args: str, check: bool = True) -> str:
        result = subprocess.run([tool, *args], capture_output=True, text=True, timeout=60, env=self.env, check=False)
        assert not check or result.returncode == 0, f"{tool} {' '.join(args)}: {result.stderr.strip()}"
        return result.stdout

    def harness(self, verb: str) -> None:
        result = subprocess.run([str(HARNESS), verb], capture_output=True, text=True, timeout=120, env=self.env)
        assert result.returncode == 0, f"local-slurm.sh {verb}: {result.stderr.strip()[-500:]}"

    def up(self) -> bool:
        return "is UP" in self.run("scontrol", "ping", check=False)

    def sbatch(self, queue: str, seconds: int) -> str:
        return self.run(
            "sbatch", "--parsable", "--hold", "-o", "/dev/null", "-e", "/dev/null", f"--comment=fairportal:{queue}",
            "--cpus-per-task=1", "--mem=256M", "--time=5", "-J", JOB_NAME, f"--wrap=sleep {seconds}",
        ).strip().split(";")[0]  # fmt: skip

    def job(self, job_id: str) -> dict | None:
        records = slurm_jobs.queue_jobs(json.loads(self.run("squeue", "--json", "-t", "all")))
        return next((plain(job) for job in records if str(job["job_id"]) == job_id), None)

    def accounting(self, job_id: str) -> dict | None:
        document = json.loads(self.run("sacct", "--json", "-X", "-S", "1970-01-01", "-j", job_id))
        records = [plain(job) for job in slurm_jobs.accounting_jobs(document) if str(job["job_id"]) == job_id]
        return records[-1] if records else None

    def cancel_all(self) -> None:
        ids = self.run("squeue", "-h", "-o", "%A").split()
        if ids:
            self.run("scancel", *ids, check=False)

    @property
    def crash_mark(self) -> Path:
        return self.wrappers / "crash-before-release"

    def arm_release_crash(self) -> None:
        self.crash_mark.touch()


def wait_for(condition: Callable[[], object], timeout: float, every: float = 0.5) -> object:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"condition not met within {timeout}s"
        time.sleep(every)


PORT_OFFSETS = {"PORT_BASE": 0, "CTLD_PORT": 17, "DBD_PORT": 19, "REST_PORT": 20, "SLURMD_PORT": 31}


def free_port_base(slot: int) -> int:
    """The first of a few port bases (ctld +17, dbd +19, slurmd +31) whose ports nobody holds:
    other checkouts on this machine start Slurms of their own too."""
    for base in range(9000 + 100 * slot, 9000 + 100 * slot + 100, 20):
        ports = (base + 17, base + 19, base + 20, base + 31)
        try:
            for port in ports:
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", port))
        except OSError:
            continue
        return base
    raise AssertionError(f"no free port base for our Slurm near {9000 + 100 * slot}")


@pytest.fixture(scope="session")
def own_slurm() -> Iterator[OwnSlurm]:
    """A one-node Slurm 22.05 of our own (about 6 s to start, 9 s to stop; see the report)."""
    shared = Path(os.environ.get("FAIRPORTAL_SLURM_DIR", ""))
    assert (shared / "cluster.env").is_file(), "FAIRPORTAL_SLURM_DIR names no local Slurm: run through `make test`"
    shared_env = dict(line.split("=", 1) for line in (shared / "cluster.env").read_text().splitlines() if "=" in line)
    slot = int(os.environ.get("FP_SLOT", "0") or 0)
    # in the system's temporary directory (munged wants every directory above its socket open
    # to all, which pytest's own temporary directories are not); kept between sessions, so job
    # ids keep counting up and sacct never sees one twice
    directory = Path(tempfile.gettempdir()) / f"fairportal-fault-slurm-{slot}"
    wrappers = directory / "tools"
    shutil.rmtree(wrappers, ignore_errors=True)
    wrappers.mkdir(parents=True)
    for tool in ("squeue", "sacct", "sbatch", "scancel", "sinfo"):
        (wrappers / tool).symlink_to(shutil.which(tool) or f"/usr/bin/{tool}")
    scontrol = shutil.which("scontrol") or "/usr/bin/scontrol"
    (wrappers / "scontrol").write_text(
        "#!/bin/sh\n# the controller dies between the partition update and the release, once per arming\n"
        f'if [ "$1" = release ] && [ -e "{wrappers}/crash-before-release" ]; then\n'
        f'  rm -f "{wrappers}/crash-before-release"\n'
        f'  FAIRPORTAL_SLURM_DIR="{directory / "slurm"}" "{HARNESS}" stop-ctld >/dev/null 2>&1\n'
        "fi\n"
        f'exec "{scontrol}" "$@"\n'
    )
    (wrappers / "scontrol").chmod(0o755)
    own = OwnSlurm(directory / "slurm", wrappers)
    base = free_port_base(slot)
    env = {
        **os.environ,
        "FAIRPORTAL_SLURM_VERSION": "22.05",
        "FAIRPORTAL_SLURM_DIR": str(own.directory),
        # every port named: a cluster.env of an earlier session would otherwise keep its own
        **{f"FAIRPORTAL_SLURM_{name}": str(base + offset) for name, offset in PORT_OFFSETS.items()},
        "FAIRPORTAL_SLURM_NODES": "1",
        "FAIRPORTAL_SLURM_CPUS": "4",
        "FAIRPORTAL_SLURM_MEM_MB": "4096",
        "FAIRPORTAL_SLURM_GPUS": "0",
        "FAIRPORTAL_SLURM_MYSQL_DIR": shared_env.get("FAIRPORTAL_SLURM_MYSQL_DIR", str(shared)),
        "FAIRPORTAL_SLURM_MYSQL_PORT": shared_env.get("FAIRPORTAL_SLURM_MYSQL_PORT", "3307"),
        "FAIRPORTAL_SLURM_ACCT_DB": f"slurm_acct_db_faults_{slot}",
        "FAIRPORTAL_SLURM_TIMEOUT": "60",
    }
    started = time.monotonic()
    result = subprocess.run([str(HARNESS), "start"], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, f"our Slurm did not start: {result.stderr.strip()[-800:]}"
    print(f"own Slurm 22.05 started in {time.monotonic() - started:.1f}s")
    try:
        yield own
    finally:
        stopped = time.monotonic()
        subprocess.run([str(HARNESS), "stop"], capture_output=True, text=True, timeout=300, env=env)
        print(f"own Slurm 22.05 stopped in {time.monotonic() - stopped:.1f}s")


@pytest.fixture
def faulty(own_slurm, settings) -> Iterator[OwnSlurm]:
    if not own_slurm.up():  # a scenario that failed half-way may have left it stopped
        own_slurm.harness("start-ctld")
    own_slurm.cancel_all()
    settings.CLUSTER_BACKEND = "simulated"
    settings.CLUSTER_BACKOFF_SECONDS = 1
    settings.CLUSTER_BACKOFF_MAX_SECONDS = 2
    settings.SLURM_COMMAND_TIMEOUT_SECONDS = 20
    yield own_slurm
    if not own_slurm.up():
        own_slurm.harness("start-ctld")
    own_slurm.cancel_all()


def setup_clusters(own: OwnSlurm) -> tuple[Cluster, LocalQueue, LocalQueue]:
    """``faulty`` (our Slurm; its flavor runs on partition gpu) and ``steady`` (simulated), a
    ClusterQueue on each."""
    faulty = Cluster.objects.create(
        name="faulty", backend="slurm", slurm_bin_dir=str(own.wrappers), slurm_conf=own.conf,
        flavor_partitions={"faulty-cpu": "gpu"},
    )  # fmt: skip
    steady = Cluster.objects.create(name="steady", backend="simulated")
    queues = []
    for name, on in (("faulty", faulty), ("steady", steady)):
        cq = ClusterQueue.objects.create(name=f"cq-{name}", admission_mode="UsageBasedAdmissionFairSharing")
        flavor = ResourceFlavor.objects.create(name=f"{name}-cpu", cluster=on)
        for resource, amount in (("cpu", "4"), ("memory", "16Gi")):
            ClusterQueueQuota.objects.create(
                cluster_queue=cq, flavor=flavor, resource=resource, nominal=parse_millis(amount)
            )
        namespace, _ = Namespace.objects.get_or_create(name=f"team-{name}")
        queues.append(LocalQueue.objects.create(namespace=namespace, name="main", cluster_queue=cq))
    return faulty, queues[0], queues[1]


def run_pass(lq: LocalQueue):
    return admission.run_admission_pass(snapshot.unit_for_cluster_queue(lq.cluster_queue_id).key)


def sync_when_due(cluster: Cluster):
    """Sync ``cluster`` once its back-off is over (at most CLUSTER_BACKOFF_MAX_SECONDS away)."""
    wait_for(lambda: not cluster_service.backing_off(cluster=cluster), timeout=10, every=0.2)
    return cluster_service.sync_cluster(cluster=cluster)


def health(cluster: Cluster) -> BackendHealth:
    return BackendHealth.objects.get(cluster=cluster)


def test_given_the_controller_stopped_between_pass_and_release_then_only_its_admissions_wait_and_it_releases_once(
    faulty, client
):
    cluster, lq_faulty, lq_steady = setup_clusters(faulty)
    # anchored a minute back: Slurm's start times are whole seconds, and may fall before "now"
    budget = Budget(
        name="faulty-wall",
        local_queue=lq_faulty,
        allocated_hours=Decimal(10),
        anchor=timezone.now() - timedelta(minutes=1),
    )
    budget.full_clean()
    budget.save()
    jobs = [faulty.sbatch("team-faulty/main", seconds=2) for _ in range(2)]
    assert len(cluster_service.sync_cluster(cluster=cluster).imported) == 2
    faulty.harness("stop-ctld")

    result = run_pass(lq_faulty)  # commits, then the release finds no controller

    admitted = list(Workload.objects.filter(cluster_job__cluster=cluster).order_by("pk"))
    assert sorted(result.admitted) == sorted(f"team-faulty/{w.name}" for w in admitted)
    assert {w.state for w in admitted} == {WorkloadState.ADMITTED}
    assert health(cluster).reachable is False
    # further admissions to the stopped cluster wait; the simulated one goes on
    waiting = submit_workload(local_queue=lq_faulty, name="waits", pod_sets=[{"count": 1, "requests": {"cpu": "1"}}])
    elsewhere = submit_workload(
        local_queue=lq_steady, name="runs", pod_sets=[{"count": 1, "requests": {"cpu": "1"}}], duration_seconds=600
    )
    assert run_pass(lq_faulty).backed_off
    assert run_pass(lq_steady).admitted == ["team-steady/runs"]
    waiting.refresh_from_db()
    elsewhere.refresh_from_db()
    assert waiting.state == WorkloadState.PENDING and elsewhere.state == WorkloadState.ADMITTED
    ready = client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["checks"]["cluster"].startswith("cluster faulty (backend slurm) unreachable since ")
    metrics = client.get("/metrics").content.decode()
    assert 'fairportal_cluster_backend_reachable{backend="slurm",cluster="faulty"} 0.0' in metrics
    assert 'fairportal_cluster_backend_reachable{backend="simulated",cluster="steady"} 1.0' in metrics
    assert sync_when_due(cluster).backed_off  # still down: the sync backs off, nothing changes
    budget_services.reconcile_budget(budget.pk)  # while admitted but not released: nothing ran yet

    faulty.harness("start-ctld")
    first = sync_when_due(cluster)
    second = cluster_service.sync_cluster(cluster=cluster)

    assert sorted(first.restarted) == [w.pk for w in admitted]  # released by the repair, once
    assert second.restarted == []
    assert health(cluster).reachable
    for job_id in jobs:
        record = faulty.job(job_id)
        assert record is not None and record["partition"] == "gpu"  # on its flavor's partition
        assert record["job_state"] in ("PENDING", "RUNNING", "COMPLETED") and not slurm_jobs.view_queue_job(record).held

    def ended():
        cluster_service.sync_cluster(cluster=cluster)
        return all(w.state == WorkloadState.FINISHED for w in Workload.objects.filter(cluster_job__cluster=cluster))

    wait_for(ended, timeout=60, every=1)
    for workload in admitted:
        assert AdmissionRecord.objects.filter(workload=workload).count() == 1  # admitted once, never twice
    # the budget is charged what Slurm ran, not the outage before the release
    budget_services.reconcile_budget(budget.pk)
    ran = Decimal(0)
    for job_id in jobs:
        record = faulty.accounting(job_id)
        assert record is not None and record["state"]["current"] == "COMPLETED"
        ran += record["time"]["end"] - record["time"]["start"]
    assert sum(BudgetCharge.objects.filter(budget=budget).values_list("unit_seconds", flat=True)) == ran
    assert ClusterJob.objects.filter(cluster=cluster).count() == 2 and Workload.objects.count() == 4  # none lost
    assert run_pass(lq_faulty).admitted == ["team-faulty/waits"]  # the cluster is back: its queue admits again


def test_given_a_job_that_finished_while_the_controller_was_down_then_it_is_accounted_once(faulty):
    cluster, lq_faulty, _ = setup_clusters(faulty)
    budget = Budget(
        name="faulty-wall",
        local_queue=lq_faulty,
        allocated_hours=Decimal(10),
        anchor=timezone.now() - timedelta(minutes=1),
    )
    budget.full_clean()
    budget.save()
    job_id = faulty.sbatch("team-faulty/main", seconds=4)
    cluster_service.sync_cluster(cluster=cluster)
    assert len(run_pass(lq_faulty).admitted) == 1
    wait_for(lambda: (faulty.job(job_id) or {}).get("job_state") == "RUNNING", timeout=30)
    assert cluster_service.sync_cluster(cluster=cluster).started  # fairportal saw it start
    budget_services.reconcile_budget(budget.pk)  # charged while it runs
    faulty.harness("stop-ctld")
    assert sync_when_due(cluster).backed_off
    time.sleep(5)  # the job ends on its node while nobody can ask the controller
    budget_services.reconcile_budget(budget.pk)  # fairportal still thinks it runs: charged meanwhile

    faulty.harness("start-ctld")
    record = wait_for(
        lambda: (lambda r: r if r and r["state"]["current"] == "COMPLETED" and r["time"]["end"] else None)(
            faulty.accounting(job_id)
        ),
        timeout=90,
        every=1,
    )
    first = sync_when_due(cluster)
    second = cluster_service.sync_cluster(cluster=cluster)

    workload = Workload.objects.get(cluster_job__cluster=cluster, cluster_job__external_id=job_id)
    assert first.finished == [workload.pk] and second.finished == []
    assert workload.state == WorkloadState.FINISHED
    start, end = record["time"]["start"], record["time"]["end"]
    assert (int(workload.started_at.timestamp()), int(workload.finished_at.timestamp())) == (start, end)
    for _ in range(2):  # a second accounting run charges nothing more
        budget_services.reconcile_budget(budget.pk)
    lines = list(BudgetCharge.objects.filter(budget=budget).values_list("kind", "unit_seconds"))
    # charged while it ran, while the controller was down and after: the lines tile Slurm's run
    # (whose end is when slurmctld, back, heard of it), nothing twice and nothing left out
    assert sum(amount for _, amount in lines) == Decimal(end - start)  # Slurm's run, once
    assert not AdmittedUsage.objects.filter(local_queue=lq_faulty, workloads__gt=0).exists()  # usage released once


def test_given_the_controller_dies_half_way_through_a_release_then_the_next_sync_finishes_it_once(faulty):
    cluster, lq_faulty, _ = setup_clusters(faulty)
    job_id = faulty.sbatch("team-faulty/main", seconds=2)
    cluster_service.sync_cluster(cluster=cluster)
    faulty.arm_release_crash()  # scontrol update Partition=gpu goes through; the release does not

    assert len(run_pass(lq_faulty).admitted) == 1

    assert not faulty.crash_mark.exists() and not faulty.up()
    assert health(cluster).reachable is False
    faulty.harness("start-ctld")
    held = faulty.job(job_id)
    assert held is not None and slurm_jobs.view_queue_job(held).held  # half-way: still held
    assert held["partition"] == "gpu"
    workload = Workload.objects.get(cluster_job__cluster=cluster, cluster_job__external_id=job_id)
    assert sync_when_due(cluster).restarted == [workload.pk]
    assert cluster_service.sync_cluster(cluster=cluster).restarted == []

    def ended():
        cluster_service.sync_cluster(cluster=cluster)
        workload.refresh_from_db()
        return workload.state == WorkloadState.FINISHED

    wait_for(ended, timeout=60, every=1)
    runs = faulty.accounting(job_id)
    assert runs is not None and runs["state"]["current"] == "COMPLETED" and runs["partition"] == "gpu"
    assert AdmissionRecord.objects.filter(workload=workload).count() == 1
