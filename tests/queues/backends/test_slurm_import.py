"""The set-based import: many jobs in one sync, checked as the submission path checks one.

Pure tests (no Slurm) drive ``submit_checked_many`` directly: the same rules as
``submit_checked``, each refusal with its reason, order kept, rows and pass requests written
once. Slurm tests (marker ``slurm``) import held jobs from the real local Slurm.
"""

from __future__ import annotations

import threading

import pytest
from django.core.exceptions import ValidationError

from fairshare.quantities import parse_millis
from queues.backends.slurm.backend import SlurmBackend
from queues.models import (
    AdmissionMode,
    ClusterJob,
    ClusterQueue,
    ClusterQueueQuota,
    LocalQueue,
    Namespace,
    ResourceFlavor,
    Workload,
    WorkloadResource,
    WorkloadState,
)
from queues.services import cluster, pass_requests
from queues.services.submission import submit_checked, submit_checked_many
from tests.queues.backends.slurm_cluster import (
    queue_job,
    sbatch,
    slurm,  # noqa: F401 - fixture
)


def make_queue(namespace: str = "team-a", *, resources=("cpu", "memory", "nvidia.com/gpu")) -> LocalQueue:
    cq = ClusterQueue.objects.create(name=f"cq-{namespace}", admission_mode=AdmissionMode.USAGE_BASED)
    flavor, _ = ResourceFlavor.objects.get_or_create(name="default")
    for resource in resources:
        ClusterQueueQuota.objects.create(cluster_queue=cq, flavor=flavor, resource=resource, nominal=parse_millis("64"))
    ns, _ = Namespace.objects.get_or_create(name=namespace)
    return LocalQueue.objects.select_related("namespace", "cluster_queue").get(
        pk=LocalQueue.objects.create(namespace=ns, name="main", cluster_queue=cq).pk
    )


def entry(queue: LocalQueue, name: str, **requests: int) -> dict:
    return {
        "local_queue": queue,
        "name": name,
        "pod_sets": [{"name": "main", "count": 1, "requests": requests or {"cpu": 1000}}],
    }


def refusal(fields: dict) -> dict[str, list[str]]:
    """What ``submit_checked`` (one at a time) raises for these fields."""
    with pytest.raises(ValidationError) as raised:
        submit_checked(**fields, request_pass=False)
    return raised.value.message_dict


@pytest.mark.django_db
def test_given_a_batch_then_good_entries_are_inserted_in_order_and_each_bad_one_is_refused_as_submit_checked_would(
    monkeypatch,
):
    queue = make_queue()
    cpu_only = make_queue("team-b", resources=("cpu",))
    Workload.objects.create(namespace=queue.namespace, local_queue=queue, name="taken", pod_sets=[])
    asked: list[int] = []
    monkeypatch.setattr(pass_requests, "request_admission_pass", asked.append)
    monkeypatch.setattr("queues.services.workloads.request_admission_pass", asked.append)
    entries = [
        entry(queue, "first", cpu=2000, memory=2**30 * 1000),
        entry(queue, "taken"),  # a workload of that name exists
        entry(cpu_only, "gpu-job", **{"nvidia.com/gpu": 1000}),  # no quota row for GPUs
        entry(queue, "Bad_Name"),  # not a DNS label
        entry(queue, "second"),
        entry(queue, "second"),  # the same name twice in one batch: the first wins
        {**entry(queue, "negative"), "pod_sets": [{"name": "main", "count": 1, "requests": {"cpu": -5}}]},
        entry(cpu_only, "third"),
    ]
    expected = {1: refusal(entries[1]), 2: refusal(entries[2]), 3: refusal(entries[3]), 6: refusal(entries[6])}

    outcomes = submit_checked_many(entries)

    created = [outcome for outcome in outcomes if isinstance(outcome, Workload)]
    assert [w.name for w in created] == ["first", "second", "third"]
    assert [w.pk for w in created] == sorted(w.pk for w in created)  # inserted in the batch's order
    for index, message_dict in expected.items():
        assert outcomes[index].message_dict == message_dict  # the reason submit_checked gives
    assert "already exists" in str(outcomes[5].message_dict)  # the second "second"
    assert {w.name: w.state for w in Workload.objects.filter(pk__in=[w.pk for w in created])} == dict.fromkeys(
        ["first", "second", "third"], WorkloadState.PENDING
    )
    rows = set(
        WorkloadResource.objects.filter(workload__in=created).values_list("workload__name", "resource", "amount")
    )
    assert rows == {
        ("first", "cpu", 2000),
        ("first", "memory", 2**30 * 1000),
        ("second", "cpu", 1000),
        ("third", "cpu", 1000),
    }
    assert sorted(asked) == sorted({queue.cluster_queue_id, cpu_only.cluster_queue_id})  # one pass per ClusterQueue


@pytest.mark.django_db
def test_given_a_batch_then_its_queries_do_not_grow_with_its_size(django_assert_max_num_queries):
    queue = make_queue()
    with django_assert_max_num_queries(9):  # the 9th: the LocalQueues' pending counts, one INSERT
        outcomes = submit_checked_many([entry(queue, f"w-{i}") for i in range(300)], request_pass=False)
    assert sum(isinstance(outcome, Workload) for outcome in outcomes) == 300


# --- against the real Slurm ------------------------------------------------------------------


@pytest.fixture
def slurm_settings(settings):
    settings.CLUSTER_BACKEND = "slurm"
    settings.SLURM_FLAVOR_PARTITIONS = {}
    settings.SLURM_ACCOUNT_QUEUES = {}
    return settings


@pytest.mark.slurm
@pytest.mark.django_db(transaction=True)
def test_given_many_jobs_when_synced_then_one_sync_imports_the_good_ones_in_job_order_and_rejects_the_rest_once(
    slurm, slurm_settings
):
    queue = make_queue()
    make_queue("cpu-only", resources=("cpu",))
    good = [sbatch(seconds=1, memory="64M") for _ in range(12)]
    gpu = sbatch("cpu-only/main", seconds=1, gpus=1)  # asks for GPUs its ClusterQueue has no quota for
    missing = sbatch("nobody/main", seconds=1)
    taken = sbatch(seconds=1)
    Workload.objects.create(namespace=queue.namespace, local_queue=queue, name=f"slurm-{taken}", pod_sets=[])

    report = cluster.sync_cluster()

    imported = list(Workload.objects.filter(cluster_job__external_id__in=good).order_by("pk"))
    assert [w.name for w in imported] == [f"slurm-{job}" for job in sorted(good, key=int)]
    assert sorted(report.imported) == [w.pk for w in imported]
    assert {w.state for w in imported} == {WorkloadState.PENDING}
    assert all(w.requests == {"cpu": 1000, "memory": 64 * 2**20 * 1000} for w in imported)
    assert WorkloadResource.objects.filter(workload__in=imported).count() == 24
    assert sorted(report.rejected, key=int) == sorted([gpu, missing, taken], key=int)
    errors = dict(ClusterJob.objects.filter(external_id__in=[gpu, missing, taken]).values_list("external_id", "error"))
    assert "has no quota for nvidia.com/gpu" in errors[gpu]
    assert errors[missing] == "LocalQueue nobody/main does not exist"
    assert "already exists" in errors[taken]
    assert "has no quota for" in queue_job(gpu)["admin_comment"]  # said on the job too
    assert all(queue_job(job)["state_reason"] == "JobHeldUser" for job in good)  # still held: fairportal decides

    again = cluster.sync_cluster()  # idempotent: nothing imported twice, each rejection reported once
    assert (again.imported, again.rejected) == ([], [])
    assert ClusterJob.objects.filter(external_id__in=good).count() == 12


@pytest.mark.slurm
@pytest.mark.django_db(transaction=True)
def test_given_two_workers_syncing_at_once_then_each_job_is_imported_once(slurm, slurm_settings):
    make_queue()
    jobs = [sbatch(seconds=1, memory="64M") for _ in range(20)]
    reports = []
    barrier = threading.Barrier(2)

    def worker() -> None:
        from django.db import connections
        from django.utils import timezone

        try:
            barrier.wait(timeout=30)
            reports.append(SlurmBackend().sync(timezone.now()))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert len(reports) == 2
    assert sorted(len(report.imported) for report in reports if not report.backed_off) in ([20], [0, 20])
    assert Workload.objects.filter(cluster_job__external_id__in=jobs).count() == 20
    assert ClusterJob.objects.filter(external_id__in=jobs).count() == 20
