"""The Slurm backend against a real local Slurm (slurmctld, slurmd, slurmdbd; `make test` starts it).

Jobs are submitted with `sbatch --hold`, imported, admitted by the real admission pass, released
by `scontrol`, run by slurmd, and ended from `sacct`. Faults are real too: slurmctld is stopped
and started, jobs are cancelled with `scancel` and fail with a non-zero exit code. Transactional
tests: the pass tells Slurm after its commit, as in production.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db.models import Sum
from django.utils import timezone

from budgets.models import Budget, BudgetCharge
from budgets.services import reconcile_budget
from fairshare.quantities import parse_millis
from queues.admission import passes as admission
from queues.backends.slurm.backend import SlurmBackend
from queues.backends.slurm.client import SlurmClient
from queues.models import (
    AdmissionMode,
    AdmissionRecord,
    BackendHealth,
    ClusterJob,
    ClusterQueue,
    ClusterQueueQuota,
    LocalQueue,
    Namespace,
    QueueHold,
    ResourceFlavor,
    Workload,
    WorkloadState,
)
from queues.services import cluster, lifecycle
from tests.queues.backends.slurm_cluster import (
    accounting_runs,
    queue_job,
    queue_states,
    run,
    sbatch,
    slurm,  # noqa: F401 - fixture
    slurm_seconds,
    start_ctld,
    stop_ctld,
    wait_for,
)

pytestmark = [pytest.mark.slurm, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def slurm_settings(settings):
    settings.CLUSTER_BACKEND = "slurm"
    settings.SLURM_FLAVOR_PARTITIONS = {"gpu-nodes": "gpu"}
    settings.SLURM_ACCOUNT_QUEUES = {}
    settings.CLUSTER_BACKOFF_SECONDS = 1
    return settings


def later(seconds: int = 600):
    """A moment past any back-off: the next sync is due then."""
    return timezone.now() + timedelta(seconds=seconds)


def slurm_queue(namespace: str = "team-a", *, cpu: str = "8", flavor: str = "default") -> LocalQueue:
    """A ClusterQueue with CPU, memory and GPU quota, and its LocalQueue ``<namespace>/main``."""
    cq = ClusterQueue.objects.create(name=f"cq-{namespace}", admission_mode=AdmissionMode.USAGE_BASED)
    for resource, amount in (("cpu", cpu), ("memory", "64Gi"), ("nvidia.com/gpu", "4")):
        ClusterQueueQuota.objects.create(
            cluster_queue=cq,
            flavor=ResourceFlavor.objects.get_or_create(name=flavor)[0],
            resource=resource,
            nominal=parse_millis(amount),
        )
    ns, _ = Namespace.objects.get_or_create(name=namespace)
    return LocalQueue.objects.create(namespace=ns, name="main", cluster_queue=cq)


def loop() -> None:
    """One turn of the control loop: observe Slurm, then decide (the pass releases after commit)."""
    cluster.sync_cluster()
    admission.run_all_admission_passes()


def workload_of(job_id: str) -> Workload:
    return Workload.objects.get(cluster_job__external_id=job_id)


def state_after_sync(job_id: str) -> str:
    cluster.sync_cluster()
    return workload_of(job_id).state


def ledger_seconds(budget: Budget) -> Decimal:
    return BudgetCharge.objects.filter(budget=budget).aggregate(total=Sum("unit_seconds"))["total"] or Decimal(0)


def test_given_held_job_when_loop_runs_then_it_is_admitted_released_run_and_charged_slurm_wall_time(
    slurm, slurm_settings
):
    lq = slurm_queue()
    budget = Budget.objects.create(
        name="team-a-hours", local_queue=lq, allocated_hours=10, anchor=timezone.now() - timedelta(hours=1)
    )
    job = sbatch(seconds=2, cpus=2, memory="1G")

    report = cluster.sync_cluster()

    workload = workload_of(job)
    assert report.imported == [workload.id]
    assert (workload.state, workload.name, workload.requests) == (
        WorkloadState.PENDING,
        f"slurm-{job}",
        {"cpu": 2000, "memory": 2**30 * 1000},
    )
    assert workload.max_runtime_seconds == 300
    assert queue_job(job)["state_reason"] == "JobHeldUser"  # still held: fairportal decides

    admission.run_all_admission_passes()

    assert workload_of(job).state == WorkloadState.ADMITTED
    wait_for(lambda: queue_job(job)["job_state"] in ("RUNNING", "COMPLETED"))  # released by the pass
    assert wait_for(lambda: state_after_sync(job) == WorkloadState.FINISHED, timeout=30)
    start, end, seconds = slurm_seconds(job)
    workload = workload_of(job)
    assert (workload.admitted_at, workload.started_at, workload.finished_at) == (start, start, end)
    assert workload.wall_time_seconds == seconds >= 2
    assert AdmissionRecord.objects.get(workload=workload).seconds() == seconds
    reconcile_budget(budget.pk)
    assert ledger_seconds(budget) == seconds  # the ledger charges what Slurm ran, to the second
    admission.run_all_admission_passes()
    assert cluster.sync_cluster().imported == []  # nothing imported or admitted twice
    assert Workload.objects.count() == 1


def test_given_drain_when_pass_evicts_then_job_is_requeued_held_and_runs_again_after_the_hold_lifts(
    slurm, slurm_settings
):
    lq = slurm_queue()
    job = sbatch(seconds=8)  # long enough to be drained while it runs, even on a loaded machine
    loop()
    wait_for(lambda: workload_of(job).started_at if cluster.sync_cluster() else None)
    hold = QueueHold.objects.create(
        local_queue=lq, code="BudgetExhausted", message="out of hours", drain=True, source="test"
    )

    admission.run_all_admission_passes()  # HoldAndDrain: evicts, then requeues the job held

    workload = workload_of(job)
    assert (workload.state, workload.pending_reason_code) == (WorkloadState.PENDING, "BudgetExhausted")
    wait_for(lambda: queue_job(job)["job_state"] == "PENDING" and queue_job(job)["state_reason"] == "JobHeldUser")
    loop()
    assert queue_job(job)["state_reason"] == "JobHeldUser"  # held while fairportal holds the queue

    hold.delete()
    # Slurm sets a requeued job's begin time (121 s on) when the requeue's epilog completes, which
    # on a loaded machine can come after the release's StartTime=now: made certain here (the
    # partition down keeps the released job from starting first), and the next sync undoes it
    run("scontrol", "update", "PartitionName=main", "State=DOWN")
    try:
        loop()
        assert workload_of(job).state == WorkloadState.ADMITTED
        assert queue_job(job)["state_reason"] != "JobHeldUser"  # released, waiting for the partition
        run("scontrol", "update", f"JobId={job}", "StartTime=now+3600")
    finally:
        run("scontrol", "update", "PartitionName=main", "State=UP")
    # a requeued job restarts when slurmctld next schedules it: seconds, longer on a loaded machine
    assert wait_for(lambda: state_after_sync(job) == WorkloadState.FINISHED, timeout=120)
    runs = accounting_runs(job)
    assert [state for state, _, _ in runs] == ["REQUEUED", "COMPLETED"]
    workload = workload_of(job)
    first, second = AdmissionRecord.objects.filter(workload=workload).order_by("admitted_at")
    assert first.admitted_at == runs[0][1] and abs((first.ended_at - runs[0][2]).total_seconds()) <= 1
    assert (second.admitted_at, second.ended_at) == (runs[1][1], runs[1][2])
    assert workload.wall_time_seconds == (runs[1][2] - runs[1][1]).total_seconds() >= 8
    assert workload.accumulated_past_execution_seconds == first.seconds()


def test_given_slurmctld_restarted_mid_pass_then_the_next_sync_releases_what_was_admitted(slurm, slurm_settings):
    slurm_queue()
    job = sbatch(seconds=2)
    cluster.sync_cluster()
    stop_ctld()
    try:
        admission.run_all_admission_passes()  # commits the admission; the release after it fails

        assert workload_of(job).state == WorkloadState.ADMITTED
        status = cluster.backend_status()
        assert not status.reachable and "scontrol" in status.last_error
        assert admission.run_all_admission_passes()[0].backed_off
    finally:
        start_ctld()
    assert queue_job(job)["state_reason"] == "JobHeldUser"  # slurmctld kept its state: still held

    report = cluster.sync_cluster(now=later())

    assert report.restarted == [workload_of(job).id]
    assert cluster.backend_status().reachable
    assert wait_for(lambda: state_after_sync(job) == WorkloadState.FINISHED, timeout=30)
    _start, _end, seconds = slurm_seconds(job)
    assert workload_of(job).wall_time_seconds == seconds


def test_given_user_cancels_jobs_in_slurm_then_workloads_are_cancelled_at_slurms_end_time(slurm, slurm_settings):
    slurm_queue(cpu="1")
    running, waiting = sbatch(seconds=30), sbatch(seconds=30)
    loop()  # one CPU of quota: the first runs, the second waits held
    wait_for(lambda: queue_job(running)["job_state"] == "RUNNING")

    run("scancel", running, waiting)
    wait_for(
        lambda: (
            state_after_sync(running) == WorkloadState.CANCELLED
            and workload_of(waiting).state == WorkloadState.CANCELLED
        )
    )

    start, end, seconds = slurm_seconds(running)
    cancelled = workload_of(running)
    assert (cancelled.admitted_at, cancelled.finished_at, cancelled.wall_time_seconds) == (start, end, seconds)
    assert AdmissionRecord.objects.get(workload=cancelled).end_reason == AdmissionRecord.EndReason.CANCELLED
    assert workload_of(waiting).admissions.count() == 0  # it never ran


def test_given_job_exits_non_zero_then_workload_fails_with_the_exit_code_and_its_wall_time(slurm, slurm_settings):
    slurm_queue()
    job = sbatch(seconds=1, exit_code=3)
    loop()

    assert wait_for(lambda: state_after_sync(job) == WorkloadState.FAILED, timeout=30)

    _start, end, seconds = slurm_seconds(job)
    workload = workload_of(job)
    assert (workload.finished_at, workload.wall_time_seconds) == (end, seconds)
    assert AdmissionRecord.objects.get(workload=workload).end_message == f"Slurm job {job} FAILED (exit code 3)"


def test_given_crash_after_commit_and_fairportal_down_while_jobs_run_then_resync_loses_no_time_and_admits_nothing_twice(
    slurm, slurm_settings, monkeypatch
):
    slurm_queue()
    first, second = sbatch(seconds=2), sbatch(seconds=2)
    cluster.sync_cluster()
    with monkeypatch.context() as patch:  # undo only this patch, not the slurm fixture's environment
        patch.setattr(
            cluster, "dispatch_decisions", lambda admitted, evicted, **clusters: None
        )  # the worker dies after the commit
        admission.run_all_admission_passes()
    assert {workload_of(first).state, workload_of(second).state} == {WorkloadState.ADMITTED}
    assert queue_job(first)["state_reason"] == queue_job(second)["state_reason"] == "JobHeldUser"

    restarted = SlurmBackend(SlurmClient()).sync(timezone.now())  # a new worker: nothing but the database

    assert sorted(restarted.restarted) == sorted([workload_of(first).id, workload_of(second).id])
    # fairportal is down again while both jobs run and end: it never sees them running
    wait_for(lambda: queue_job(first)["job_state"] == queue_job(second)["job_state"] == "COMPLETED")

    report = SlurmBackend(SlurmClient()).sync(timezone.now())

    assert sorted(report.finished) == sorted([workload_of(first).id, workload_of(second).id])
    for job in (first, second):
        start, end, seconds = slurm_seconds(job)
        workload = workload_of(job)
        assert (workload.admitted_at, workload.finished_at, workload.wall_time_seconds) == (start, end, seconds)
    assert admission.run_all_admission_passes()[0].admitted == []
    assert cluster.sync_cluster().imported == []
    assert AdmissionRecord.objects.count() == 2  # one admission each


def test_given_slurm_unreachable_then_sync_and_pass_back_off_and_the_dashboard_says_so(
    slurm, slurm_settings, admin_client
):
    slurm_settings.CLUSTER_BACKOFF_SECONDS = 60
    slurm_queue()
    job = sbatch(seconds=1)
    stop_ctld()
    try:
        first = cluster.sync_cluster()
        health = BackendHealth.objects.get(backend="slurm")
        assert first.backed_off and not health.reachable and health.failures == 1
        assert cluster.sync_cluster().backed_off  # the retry is not due: Slurm is not even asked
        assert BackendHealth.objects.get(backend="slurm").failures == 1
        assert admission.run_all_admission_passes()[0].backed_off
        page = admin_client.get("/").content.decode()
        assert "Cluster default (backend slurm) unreachable" in page
    finally:
        start_ctld()

    assert not cluster.sync_cluster(now=later()).backed_off

    assert cluster.backend_status().reachable
    assert "unreachable" not in admin_client.get("/").content.decode()
    assert workload_of(job).state == WorkloadState.PENDING  # imported once Slurm answered


def test_given_many_held_jobs_then_one_pass_releases_them_with_a_fixed_number_of_slurm_commands(
    slurm, slurm_settings, monkeypatch
):
    slurm_queue(cpu="24")
    jobs = [sbatch(seconds=1, memory="64M") for _ in range(30)]
    cluster.sync_cluster()
    commands = []
    original = SlurmClient._run
    monkeypatch.setattr(SlurmClient, "_run", lambda self, *args: commands.append(args[:2]) or original(self, *args))

    admission.run_all_admission_passes()

    assert Workload.objects.filter(state=WorkloadState.ADMITTED).count() == 24
    assert commands == [("scontrol", "release")]  # one release for 24 jobs (no partition to set, none requeued)
    started = lambda: sum(queue_states().get(job) in ("RUNNING", "COMPLETING", "COMPLETED") for job in jobs)  # noqa: E731
    assert wait_for(lambda: started() >= 24, timeout=60)  # Slurm runs what the one release let go


def test_given_flavor_mapped_to_a_partition_then_the_job_is_released_there(slurm, slurm_settings):
    slurm_queue(flavor="gpu-nodes")
    job = sbatch(seconds=1, gpus=1)
    assert queue_job(job)["partition"] == "main"

    loop()

    assert workload_of(job).flavor_assignment == {
        "cpu": "gpu-nodes",
        "memory": "gpu-nodes",
        "nvidia.com/gpu": "gpu-nodes",
    }
    assert queue_job(job)["partition"] == "gpu"
    assert wait_for(lambda: state_after_sync(job) == WorkloadState.FINISHED, timeout=30)


def test_given_jobs_fairportal_cannot_take_then_each_is_rejected_once_and_an_unheld_one_is_held(slurm, slurm_settings):
    slurm_queue()
    unknown = sbatch("nobody/main", seconds=1)
    array = sbatch(seconds=1, extra=("--array=1-3",))
    # forgot --hold: fairportal holds it, then decides (--begin keeps Slurm from starting it first)
    unheld = sbatch(seconds=30, hold=False, extra=("--begin=now+120",))
    ran = sbatch(seconds=30, hold=False)  # forgot --hold and Slurm started it: reported, not imported
    wait_for(lambda: queue_job(ran)["job_state"] == "RUNNING")

    first = cluster.sync_cluster()

    assert sorted(first.rejected, key=int) == [unknown, array, ran]
    assert ClusterJob.objects.get(external_id=ran).error == "started before fairportal admitted it (submit with --hold)"
    assert ClusterJob.objects.get(external_id=unknown).error == "LocalQueue nobody/main does not exist"
    assert ClusterJob.objects.get(external_id=array).error.startswith("job arrays are not supported")
    assert "LocalQueue nobody/main does not exist" in queue_job(unknown)["admin_comment"]
    assert queue_job(unknown)["state_reason"] == "JobHeldUser"  # left for an admin to act on
    assert first.imported == [workload_of(unheld).id]
    assert queue_job(unheld)["state_reason"] == "JobHeldAdmin"  # held by fairportal, an operator
    assert cluster.sync_cluster().rejected == []  # reported once


def test_given_workload_cancelled_through_the_api_then_its_slurm_job_is_cancelled(slurm, slurm_settings):
    slurm_queue()
    job = sbatch(seconds=60)
    loop()
    wait_for(lambda: queue_job(job)["job_state"] == "RUNNING")

    lifecycle.cancel_workload(workload_of(job).id, message="not needed")
    cluster.sync_cluster()

    wait_for(lambda: queue_job(job)["job_state"] == "CANCELLED")
    wait_for(lambda: cluster.sync_cluster() is not None and ClusterJob.objects.get(external_id=job).settled)


@pytest.fixture
def api(admin_user):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(admin_user)
    return client


def api_submission(**fields):
    body = {
        "name": "api-job",
        "local_queue": "team-a/main",
        "max_runtime_seconds": 90,
        "pod_sets": [{"count": 1, "requests": {"cpu": "2", "memory": "512Mi"}}],
        "command": "sleep 2",
    }
    return {**body, **fields}


def test_given_submission_with_command_through_the_api_then_a_held_slurm_job_runs_it_once_admitted(
    slurm, slurm_settings, api
):
    slurm_queue()

    response = api.post("/api/v1/workloads/", api_submission(), format="json")

    assert response.status_code == 201, response.json()
    workload = Workload.objects.get(pk=response.json()["id"])
    job = ClusterJob.objects.get(workload=workload).external_id
    held = queue_job(job)
    assert (held["state_reason"], held["comment"], held["name"]) == ("JobHeldUser", "fairportal:team-a/main", "api-job")
    assert (held["cpus"], held["memory_per_node"], held["time_limit"]) == (2, 512, 2)
    assert cluster.sync_cluster().imported == []  # linked at submission: not imported again

    loop()

    assert wait_for(lambda: state_after_sync(job) == WorkloadState.FINISHED, timeout=30)
    _start, _end, seconds = slurm_seconds(job)
    assert Workload.objects.get(pk=workload.pk).wall_time_seconds == seconds


def test_given_command_the_backend_cannot_run_then_400_naming_command_and_nothing_is_stored(slurm, slurm_settings, api):
    slurm_queue()
    ClusterQueueQuota.objects.create(
        cluster_queue=ClusterQueue.objects.get(),
        flavor=ResourceFlavor.objects.get(),
        resource="example.com/fpga",
        nominal=parse_millis("2"),
    )

    unmapped = api.post(
        "/api/v1/workloads/",
        api_submission(pod_sets=[{"requests": {"cpu": "1", "example.com/fpga": "1"}}]),
        format="json",
    )
    slurm_settings.CLUSTER_BACKEND = "simulated"
    simulated = api.post("/api/v1/workloads/", api_submission(name="other"), format="json")

    assert unmapped.status_code == 400 and "example.com/fpga has no Slurm TRES" in unmapped.json()["command"][0]
    assert (
        simulated.status_code == 400 and "simulated cluster backend runs no commands" in simulated.json()["command"][0]
    )
    assert not Workload.objects.exists()


def test_given_slurm_unreachable_then_api_submission_with_command_is_a_503_and_nothing_is_stored(
    slurm, slurm_settings, api
):
    slurm_queue()
    stop_ctld()
    try:
        response = api.post("/api/v1/workloads/", api_submission(), format="json")
    finally:
        start_ctld()

    assert response.status_code == 503
    assert response.json()["code"] == "cluster_unavailable"
    assert not Workload.objects.exists()
