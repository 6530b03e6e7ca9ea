"""Two real Slurm clusters of different versions (22.05 and 24.11) and the simulated cluster,
driven by one fairportal at once (issue 27's foundation).

Each Slurm cluster is a ``Cluster`` row with its own client tools and ``slurm.conf``; its
flavor's ClusterQueue takes the jobs held on it. Jobs are submitted with each version's own
``sbatch --hold``, imported by each cluster's sync (the same job id on both is two jobs),
admitted by the real pass, released on their own cluster's partition, and finished from its
``sacct``. Then 22.05's connection points at a controller that is not there (a copy of its
``slurm.conf`` naming a closed port: the shared daemons keep running for the other tests) and
24.11 and the simulated cluster go on importing and admitting; repaired, 22.05 catches up. Only this test's jobs (its own job name) are
ever cancelled: the clusters are shared.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest
from django.utils import timezone

from fairshare.quantities import parse_millis
from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.backends.slurm import jobs as slurm_jobs
from queues.backends.slurm.backend import SlurmBackend
from queues.models import (
    AdmissionMode,
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
    default_cluster,
)
from queues.services import cluster as cluster_service
from tests.queues.backends.slurm_cluster import CLUSTERS, plain, wait_for

pytestmark = [pytest.mark.slurm, pytest.mark.django_db(transaction=True)]

JOB_NAME = "fp-two-clusters"


class Side:
    """One local Slurm: its directory, tools and conf, and helpers that only touch our jobs."""

    def __init__(self, version: str, directory: Path, job_name: str = JOB_NAME) -> None:
        self.version = version
        self.job_name = job_name  # the only jobs ``ours``/``cancel_ours`` see: the clusters are shared
        self.directory = directory
        wrappers = directory / "bin"
        self.bin_dir = str(wrappers) if wrappers.is_dir() else ""
        self.conf = str(directory / "etc" / "slurm.conf")

    def run(self, tool: str, *args: str, conf: str | None = None) -> str:
        command = os.path.join(self.bin_dir, tool) if self.bin_dir else tool
        env = {**os.environ, "SLURM_CONF": conf or self.conf}
        result = subprocess.run([command, *args], capture_output=True, text=True, timeout=60, env=env, check=False)
        assert result.returncode == 0, f"{tool} {' '.join(args)} on {self.version}: {result.stderr.strip()}"
        return result.stdout

    def sbatch(self, queue: str, seconds: int = 2) -> str:
        return (
            self.run(
                "sbatch",
                "--parsable",
                "--hold",
                "-o",
                "/dev/null",
                "-e",
                "/dev/null",
                f"--comment=fairportal:{queue}",
                "--cpus-per-task=1",
                "--mem=256M",
                "--time=5",
                "-J",
                self.job_name,
                f"--wrap=sleep {seconds}",
            )
            .strip()
            .split(";")[0]
        )

    def ours(self) -> list[str]:
        return self.run("squeue", "-h", "-n", self.job_name, "-o", "%A").split()

    def cancel_ours(self) -> None:
        ids = self.ours()
        if ids:
            self.run("scancel", *ids)

    def job(self, job_id: str) -> dict | None:
        records = slurm_jobs.queue_jobs(json.loads(self.run("squeue", "--json", "-t", "all")))
        return next((plain(job) for job in records if str(job["job_id"]) == job_id), None)


S = TypeVar("S", bound=Side)


@contextmanager
def open_sides(kind: type[S], job_name: str = JOB_NAME) -> Iterator[tuple[S, S]]:
    """Slurm 22.05 and 24.11 as ``kind``, each answering and without our jobs, before and after."""
    by_version = {version: directory for version, directory in CLUSTERS if directory is not None}
    missing = [version for version in ("22.05", "24.11") if version not in by_version]
    assert not missing, f"FAIRPORTAL_SLURM_DIRS names no {', '.join(missing)} cluster: run through `make test`"
    old, new = kind("22.05", by_version["22.05"], job_name), kind("24.11", by_version["24.11"], job_name)
    for side in (old, new):
        assert "is UP" in side.run("scontrol", "ping"), f"the local Slurm {side.version} does not answer: `make slurm`"
        side.cancel_ours()
    yield old, new
    for side in (old, new):
        side.cancel_ours()


@pytest.fixture
def sides() -> Iterator[tuple[Side, Side]]:
    with open_sides(Side) as both:
        yield both


def queue_on(flavor: ResourceFlavor, namespace: str) -> LocalQueue:
    cq = ClusterQueue.objects.create(name=f"cq-{flavor.name}", admission_mode=AdmissionMode.USAGE_BASED)
    for resource, amount in (("cpu", "4"), ("memory", "16Gi")):
        ClusterQueueQuota.objects.create(
            cluster_queue=cq, flavor=flavor, resource=resource, nominal=parse_millis(amount)
        )
    ns, _ = Namespace.objects.get_or_create(name=namespace)
    return LocalQueue.objects.create(namespace=ns, name="main", cluster_queue=cq)


def run_pass(queue: LocalQueue):
    return admission.run_admission_pass(snapshot.unit_for_cluster_queue(queue.cluster_queue_id).key)


def test_given_two_slurm_versions_and_the_simulated_cluster_then_each_runs_its_own_and_one_down_holds_only_its_own(
    sides, settings, tmp_path
):
    old, new = sides
    settings.CLUSTER_BACKEND = "simulated"
    settings.CLUSTER_BACKOFF_SECONDS = 1
    on_old = Cluster.objects.create(
        name="slurm-2205", backend="slurm", slurm_bin_dir=old.bin_dir, slurm_conf=old.conf,
        flavor_partitions={"old-cpu": "main"},
    )  # fmt: skip
    on_new = Cluster.objects.create(
        name="slurm-2411", backend="slurm", slurm_bin_dir=new.bin_dir, slurm_conf=new.conf,
        flavor_partitions={"new-cpu": "gpu"},
    )  # fmt: skip
    lq_old = queue_on(ResourceFlavor.objects.create(name="old-cpu", cluster=on_old), "team-old")
    lq_new = queue_on(ResourceFlavor.objects.create(name="new-cpu", cluster=on_new), "team-new")
    lq_sim = queue_on(ResourceFlavor.objects.create(name="sim-cpu"), "team-sim")  # the default: simulated

    job_old, job_new = old.sbatch("team-old/main"), new.sbatch("team-new/main")
    from queues.services import submit_workload

    simulated = submit_workload(
        local_queue=lq_sim, name="sim", pod_sets=[{"count": 1, "requests": {"cpu": "1"}}], duration_seconds=1
    )

    report = cluster_service.sync_cluster()  # every cluster: each imports the jobs held on it
    assert not report.backed_off and len(report.imported) == 2
    links = {link.cluster.name: link.external_id for link in ClusterJob.objects.select_related("cluster")}
    assert links == {"slurm-2205": job_old, "slurm-2411": job_new}
    for queue in (lq_old, lq_new, lq_sim):
        assert len(run_pass(queue).admitted) == 1

    placed = {
        w.local_queue.namespace.name: (w.cluster.name, w.state) for w in Workload.objects.select_related("cluster")
    }
    assert placed["team-old"] == ("slurm-2205", WorkloadState.ADMITTED)
    assert placed["team-new"] == ("slurm-2411", WorkloadState.ADMITTED)
    assert placed["team-sim"] == ("default", WorkloadState.ADMITTED)
    # released on its own cluster, on the partition its cluster row maps its flavor to
    assert old.job(job_old)["partition"] == "main"
    assert new.job(job_new)["partition"] == "gpu"

    def all_ended():
        cluster_service.sync_cluster(now=timezone.now())
        return set(Workload.objects.values_list("state", flat=True)) == {WorkloadState.FINISHED}

    wait_for(all_ended, timeout=60, every=1)
    finished = Workload.objects.get(pk=simulated.pk)
    assert finished.cluster == default_cluster()
    for name, side, job_id in (("team-old", old, job_old), ("team-new", new, job_new)):
        workload = Workload.objects.get(namespace__name=name)
        assert workload.started_at is not None and workload.finished_at >= workload.started_at
        assert side.job(job_id) is None or side.job(job_id)["job_state"] == "COMPLETED"

    # 22.05's connection now names a controller that is not there (its client tools read
    # SLURM_CONF; 24.11's chroot wrappers fix their own), while its daemons keep running.
    broken = tmp_path / "slurm.conf"
    text = Path(old.conf).read_text()
    broken.write_text(
        "".join("SlurmctldPort=1\n" if line.startswith("SlurmctldPort") else line + "\n" for line in text.splitlines())
        + ("" if "SlurmctldPort" in text else "SlurmctldPort=1\n")
        + "MessageTimeout=2\n"
    )
    Cluster.objects.filter(pk=on_old.pk).update(slurm_conf=str(broken))
    second_old, second_new = old.sbatch("team-old/main", seconds=1), new.sbatch("team-new/main", seconds=1)

    report = cluster_service.sync_cluster()

    assert report.backed_off
    health = {row.cluster.name: row.reachable for row in BackendHealth.objects.select_related("cluster")}
    assert health == {"default": True, "slurm-2205": False, "slurm-2411": True}
    assert cluster_service.backend_status().reachable  # the default cluster's own status is unchanged
    imported = Workload.objects.get(cluster_job__external_id=second_new, cluster_job__cluster=on_new)
    assert not Workload.objects.filter(cluster_job__cluster=on_old, cluster_job__external_id=second_old).exists()
    assert run_pass(lq_new).admitted == [f"team-new/{imported.name}"]  # the reachable cluster admits
    assert run_pass(lq_old).backed_off  # its only flavor is on the unreachable cluster
    assert run_pass(lq_sim).backed_off is False  # and the simulated cluster goes on too
    wait_for(lambda: (new.job(second_new) or {}).get("job_state") in ("RUNNING", "COMPLETED"), timeout=30)

    # the connection repaired: the next sync gets through, imports the held job, and it runs
    Cluster.objects.filter(pk=on_old.pk).update(slurm_conf=old.conf)
    BackendHealth.objects.filter(cluster=on_old).update(retry_at=None)
    assert not cluster_service.sync_cluster(cluster=Cluster.objects.get(pk=on_old.pk)).backed_off
    assert BackendHealth.objects.get(cluster=on_old).reachable
    recovered = Workload.objects.get(cluster_job__external_id=second_old, cluster_job__cluster=on_old)
    assert run_pass(lq_old).admitted == [f"team-old/{recovered.name}"]
    wait_for(lambda: (old.job(second_old) or {}).get("job_state") in ("RUNNING", "COMPLETED"), timeout=30)


def test_given_one_tenant_with_jobs_of_the_same_id_on_two_clusters_then_both_are_imported_under_names_of_their_cluster(
    sides, settings
):
    old, new = sides
    settings.CLUSTER_BACKEND = "simulated"
    on_old = Cluster.objects.create(name="slurm-2205", backend="slurm", slurm_bin_dir=old.bin_dir, slurm_conf=old.conf)
    on_new = Cluster.objects.create(name="slurm-2411", backend="slurm", slurm_bin_dir=new.bin_dir, slurm_conf=new.conf)
    lq_old = queue_on(ResourceFlavor.objects.create(name="old-cpu", cluster=on_old), "team-both")
    lq_new = LocalQueue.objects.create(
        namespace=lq_old.namespace,
        name="other",
        cluster_queue=queue_on(
            ResourceFlavor.objects.create(name="new-cpu", cluster=on_new), "team-other"
        ).cluster_queue,
    )
    job_new = new.sbatch("team-both/other")
    # 22.05 already gave the same tenant a job with that id (ids repeat across clusters), imported
    # under the name 22.05's backend gives it
    named = SlurmBackend(client=object(), cluster=on_old).workload_name(job_new)  # type: ignore[arg-type]
    assert named == f"slurm-2205-j{job_new}"
    taken = Workload.objects.create(
        namespace=lq_old.namespace, local_queue=lq_old, name=named, pod_sets=[], cluster=on_old
    )
    ClusterJob.objects.create(backend="slurm", cluster=on_old, external_id=job_new, workload=taken)

    report = cluster_service.sync_cluster()

    assert not report.rejected
    imported = Workload.objects.get(cluster_job__cluster=on_new, cluster_job__external_id=job_new)
    assert (imported.name, imported.local_queue_id) == (f"slurm-2411-j{job_new}", lq_new.pk)
    assert run_pass(lq_new).admitted == [f"team-both/{imported.name}"]
    # the default cluster keeps its names; a cluster name too long for "<name>-j<id>" is cut, its id kept
    assert SlurmBackend(client=object(), cluster=default_cluster()).workload_name("7") == "slurm-7"  # type: ignore[arg-type]
    long = Cluster.objects.create(name="c" * 60, backend="slurm")
    assert SlurmBackend(client=object(), cluster=long).workload_name("1234567") == f"{'c' * 40}-c{long.pk}-j1234567"  # type: ignore[arg-type]
