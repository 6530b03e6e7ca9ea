"""Placement over two real Slurm clusters of different versions (22.05 and 24.11) behind one
ClusterQueue (issue 27's placement rule).

The ClusterQueue ``mixed`` holds flavor ``old-cpu`` on 22.05 first and ``new-cpu`` on 24.11
second (Kueue's order: the first that fits). A job submitted to 24.11 directly is imported
bound to it and admitted only on ``new-cpu``, even while ``old-cpu`` has room first in order.
A workload submitted through the API with a command has no job until the pass places it: the
held job is created on the chosen cluster, linked, released, and runs there once. A crash
between the sbatch and the link (or a dispatch that never ran) is repaired by the next sync
without a second job; an evicted placed workload stays bound to its cluster.

Only this module's jobs (names starting ``fp-placement``) are ever cancelled: the Slurm
clusters are shared with other tests.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.utils import timezone

from fairshare.quantities import parse_millis
from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.backends.slurm import jobs as slurm_jobs
from queues.models import (
    AdmissionMode,
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
from tests.queues.backends.slurm_cluster import wait_for
from tests.queues.backends.test_slurm_clusters import Side, open_sides

pytestmark = [pytest.mark.slurm, pytest.mark.django_db(transaction=True)]

NAMES = (
    "fp-placement-imported",
    "fp-placement-a",
    "fp-placement-b",
    "fp-placement-c",
    "fp-placement-d",
    "fp-placement-filler",
    "fp-placement-evicted",
)


class OurSide(Side):
    """A local Slurm, touching only this module's job names."""

    def sbatch_as(self, name: str, comment: str, seconds: int = 2) -> str:
        options = ["--parsable", "--hold", "-o", "/dev/null", "-e", "/dev/null", f"--comment={comment}"]
        options += ["--cpus-per-task=1", "--mem=256M", "--time=5", "-J", name, f"--wrap=sleep {seconds}"]
        return self.run("sbatch", *options).strip().split(";")[0]

    def ours(self) -> list[str]:
        return self.run("squeue", "-h", "-n", ",".join(NAMES), "-o", "%A").split()

    baseline: frozenset[str] = frozenset()  # our names' jobs of earlier runs squeue still shows

    def named(self, name: str) -> list[str]:
        """Job ids of every job with this name made during this test (any state squeue shows)."""
        ids = self.run("squeue", "-h", "-t", "all", "-n", name, "-o", "%A").split()
        return [job_id for job_id in ids if job_id not in self.baseline]


@pytest.fixture
def sides() -> Iterator[tuple[OurSide, OurSide]]:
    with open_sides(OurSide) as (old, new):
        for side in (old, new):
            side.baseline = frozenset(side.run("squeue", "-h", "-t", "all", "-n", ",".join(NAMES), "-o", "%A").split())
        yield old, new


@pytest.fixture
def mixed(sides, settings) -> tuple[LocalQueue, Cluster, Cluster]:
    """One ClusterQueue, ``old-cpu`` (22.05, 1 CPU) first and ``new-cpu`` (24.11, 4 CPUs) second."""
    old, new = sides
    settings.CLUSTER_BACKEND = "simulated"  # the default cluster: not used by this queue
    settings.SLURM_SUBMIT_OUTPUT = "/dev/null"
    on_old = Cluster.objects.create(
        name="slurm-2205", backend="slurm", slurm_bin_dir=old.bin_dir, slurm_conf=old.conf,
        flavor_partitions={"old-cpu": "main"},
    )  # fmt: skip
    on_new = Cluster.objects.create(
        name="slurm-2411", backend="slurm", slurm_bin_dir=new.bin_dir, slurm_conf=new.conf,
        flavor_partitions={"new-cpu": "gpu"},
    )  # fmt: skip
    cq = ClusterQueue.objects.create(name="mixed", admission_mode=AdmissionMode.USAGE_BASED)
    for order, (flavor, cpus) in enumerate(
        ((ResourceFlavor.objects.create(name="old-cpu", cluster=on_old), "1"),
         (ResourceFlavor.objects.create(name="new-cpu", cluster=on_new), "4"))
    ):  # fmt: skip
        for resource, amount in (("cpu", cpus), ("memory", "16Gi")):
            ClusterQueueQuota.objects.create(
                cluster_queue=cq, flavor=flavor, flavor_order=order, resource=resource, nominal=parse_millis(amount)
            )
    namespace = Namespace.objects.create(name="team-place")
    return LocalQueue.objects.create(namespace=namespace, name="main", cluster_queue=cq), on_old, on_new


def run_pass(queue: LocalQueue):
    return admission.run_admission_pass(snapshot.unit_for_cluster_queue(queue.cluster_queue_id).key)


def all_ended(*workloads: Workload) -> bool:
    cluster_service.sync_cluster(now=timezone.now())
    states = set(Workload.objects.filter(pk__in=[w.pk for w in workloads]).values_list("state", flat=True))
    return states <= {WorkloadState.FINISHED, WorkloadState.FAILED, WorkloadState.CANCELLED} and bool(states)


def test_given_a_job_submitted_to_2411_then_it_is_admitted_only_on_2411s_flavor_though_2205s_has_room_first(
    sides, mixed
):
    old, new = sides
    queue, _on_old, on_new = mixed
    job = new.sbatch_as("fp-placement-imported", "fairportal:team-place/main")

    assert cluster_service.sync_cluster().imported
    imported = Workload.objects.get(cluster_job__cluster=on_new, cluster_job__external_id=job)
    result = run_pass(queue)

    assert result.admitted == [f"team-place/{imported.name}"]
    imported.refresh_from_db()
    assert (imported.flavor_assignment, imported.cluster.name) == (
        {"cpu": "new-cpu", "memory": "new-cpu"},
        "slurm-2411",
    )
    assert wait_for(lambda: all_ended(imported), timeout=60, every=1)
    imported.refresh_from_db()
    assert imported.state == WorkloadState.FINISHED and imported.started_at is not None
    assert ClusterJob.objects.filter(workload=imported).count() == 1
    assert old.named("fp-placement-imported") == []  # nothing was ever created on 22.05


def api_body(name: str) -> dict:
    return {
        "name": name,
        "local_queue": "team-place/main",
        "max_runtime_seconds": 120,
        "pod_sets": [{"count": 1, "requests": {"cpu": "1", "memory": "256Mi"}}],
        "command": "sleep 2",
    }


def test_given_api_submissions_with_a_command_then_the_pass_places_each_on_the_cluster_with_room_and_it_runs_there_once(
    sides, mixed, api
):
    old, new = sides
    queue, on_old, on_new = mixed

    first = api.post("/api/v1/workloads/", api_body("fp-placement-a"), format="json")
    second = api.post("/api/v1/workloads/", api_body("fp-placement-b"), format="json")

    assert first.status_code == 201 and second.status_code == 201, (first.json(), second.json())
    assert not ClusterJob.objects.exists()  # no job anywhere until the pass chooses a cluster
    assert old.named("fp-placement-a") == new.named("fp-placement-a") == []
    assert len(run_pass(queue).admitted) == 2
    a = Workload.objects.get(name="fp-placement-a")
    b = Workload.objects.get(name="fp-placement-b")
    # old-cpu (first in order) has room for one CPU: the first; the second goes to 24.11
    assert (a.cluster, a.flavor_assignment["cpu"]) == (on_old, "old-cpu")
    assert (b.cluster, b.flavor_assignment["cpu"]) == (on_new, "new-cpu")
    link_a, link_b = ClusterJob.objects.get(workload=a), ClusterJob.objects.get(workload=b)
    assert (link_a.cluster, link_b.cluster) == (on_old, on_new)
    assert old.named("fp-placement-a") == [link_a.external_id] and new.named("fp-placement-a") == []
    assert new.named("fp-placement-b") == [link_b.external_id] and old.named("fp-placement-b") == []
    record = old.job(link_a.external_id)
    assert record is not None and record["partition"] == "main"
    assert slurm_jobs.placed_workload(record) == a.pk  # its comment names the workload, not a queue

    assert wait_for(lambda: all_ended(a, b), timeout=60, every=1)
    for workload, side, link in ((a, old, link_a), (b, new, link_b)):
        workload.refresh_from_db()
        assert workload.state == WorkloadState.FINISHED and workload.started_at is not None
        assert side.named(workload.name) in ([link.external_id], [])  # one job (or already purged)
    assert ClusterJob.objects.filter(workload__isnull=False).count() == 2  # (other tests' jobs: rejected rows)
    assert not Workload.objects.exclude(pk__in=[a.pk, b.pk]).exists()  # nothing imported twice


def test_given_a_crash_between_sbatch_and_the_link_then_the_sync_links_that_job_and_never_makes_a_second(
    sides, mixed, api, monkeypatch
):
    old, new = sides
    queue, on_old, on_new = mixed
    # the dispatch after the pass's commit never runs (a worker killed right after the commit)
    monkeypatch.setattr(cluster_service, "dispatch_decisions", lambda *args, **kwargs: None)
    for name in ("fp-placement-c", "fp-placement-d"):
        assert api.post("/api/v1/workloads/", api_body(name), format="json").status_code == 201
    assert len(run_pass(queue).admitted) == 2
    c = Workload.objects.get(name="fp-placement-c")
    d = Workload.objects.get(name="fp-placement-d")
    assert (c.cluster, d.cluster) == (on_old, on_new) and not ClusterJob.objects.exists()
    # c's placement got as far as the sbatch on 22.05 (its job held, naming it), not the link
    orphan = old.sbatch_as("fp-placement-c", f"{slurm_jobs.PLACED_PREFIX}{c.pk}")
    # and a double of it (a second crashed attempt): it must be cancelled, never run
    double = old.sbatch_as("fp-placement-c", f"{slurm_jobs.PLACED_PREFIX}{c.pk}")

    report = cluster_service.sync_cluster()

    assert report.imported == []  # jobs fairportal placed are never imported as new workloads
    assert ClusterJob.objects.get(workload=c).external_id == orphan  # linked, not created again
    assert ClusterJob.objects.get(workload=d).cluster == on_new  # d had no job: the sync made it
    assert len(new.named("fp-placement-d")) == 1
    assert wait_for(lambda: (old.job(double) or {}).get("job_state") in (None, "CANCELLED"), timeout=30)
    assert wait_for(lambda: all_ended(c, d), timeout=60, every=1)
    for workload in (c, d):
        workload.refresh_from_db()
        assert workload.state == WorkloadState.FINISHED
    assert ClusterJob.objects.filter(workload__isnull=False).count() == 2


def test_given_a_placed_workload_evicted_then_its_job_is_requeued_held_there_and_it_is_readmitted_only_there(
    sides, mixed, api
):
    old, new = sides
    queue, on_old, on_new = mixed
    assert api.post("/api/v1/workloads/", api_body("fp-placement-filler"), format="json").status_code == 201
    body = {**api_body("fp-placement-evicted"), "command": "sleep 60"}
    assert api.post("/api/v1/workloads/", body, format="json").status_code == 201
    assert len(run_pass(queue).admitted) == 2
    filler = Workload.objects.get(name="fp-placement-filler")
    evicted = Workload.objects.get(name="fp-placement-evicted")
    assert (filler.cluster, evicted.cluster) == (on_old, on_new)  # old-cpu held one CPU: the filler's
    job = ClusterJob.objects.get(workload=evicted).external_id
    assert wait_for(lambda: (new.job(job) or {}).get("job_state") == "RUNNING", timeout=30)

    ClusterQueue.objects.filter(pk=queue.cluster_queue_id).update(stop_policy="HoldAndDrain")
    assert sorted(run_pass(queue).evicted) == ["team-place/fp-placement-evicted", "team-place/fp-placement-filler"]
    assert wait_for(lambda: (new.job(job) or {}).get("job_state") == "PENDING", timeout=30)  # requeued held
    cancelled = api.post(f"/api/v1/workloads/{filler.pk}/cancel/", {}, format="json")
    assert cancelled.status_code == 200, cancelled.json()  # old-cpu (first in order) is free again
    ClusterQueue.objects.filter(pk=queue.cluster_queue_id).update(stop_policy="None")

    assert run_pass(queue).admitted == ["team-place/fp-placement-evicted"]
    evicted.refresh_from_db()
    assert (evicted.cluster, evicted.flavor_assignment["cpu"]) == (on_new, "new-cpu")  # bound to its job's cluster
    assert ClusterJob.objects.get(workload=evicted).external_id == job  # the same job, never a second
    assert wait_for(lambda: (new.job(job) or {}).get("job_state") == "RUNNING", timeout=60)
    assert old.named("fp-placement-evicted") == [] and new.named("fp-placement-evicted") == [job]


def test_given_a_queue_over_a_cluster_that_runs_no_commands_then_a_command_is_refused_naming_that_cluster(mixed, api):
    queue, _on_old, _on_new = mixed
    simulated = ResourceFlavor.objects.create(name="sim-cpu")  # the default cluster: simulated here
    ClusterQueueQuota.objects.create(
        cluster_queue_id=queue.cluster_queue_id, flavor=simulated, flavor_order=2, resource="cpu", nominal=1000
    )

    response = api.post("/api/v1/workloads/", api_body("fp-placement-a"), format="json")

    assert response.status_code == 400
    assert response.json()["command"] == [
        "the simulated cluster backend (cluster default, one of its ClusterQueue's) runs no commands; leave command out"
    ]
    assert not Workload.objects.exists()


@pytest.fixture
def api(admin_user):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(admin_user)
    return client
