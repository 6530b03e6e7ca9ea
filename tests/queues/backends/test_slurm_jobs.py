"""Reading Slurm's job records (squeue/sacct JSON as Slurm 22.05 prints them): no cluster needed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from queues.backends.slurm import jobs

RESOURCES = {"cpu": "cpu", "mem": "memory", "gres/gpu": "nvidia.com/gpu"}


def queued(**fields):
    job = {
        "job_id": 42,
        "job_state": "PENDING",
        "state_reason": "JobHeldUser",
        "priority": 0,
        "comment": "fairportal:team-a/main",
        "account": "root",
        "tres_req_str": "cpu=2,mem=1G,node=1,billing=2,gres/gpu=1",
        "time_limit": 5,
        "submit_time": 1795572838,
        "start_time": 0,
        "end_time": 0,
        "exit_code": 0,
    }
    return {**job, **fields}


def test_given_held_job_with_comment_then_its_queue_requests_and_limit_are_read():
    job = queued()

    assert jobs.names_fairportal(job, {})
    assert jobs.local_queue_key(job, {}) == "team-a/main"
    assert jobs.requests_of(job, RESOURCES) == {"cpu": 2000, "memory": 2**30 * 1000, "nvidia.com/gpu": 1000}
    assert jobs.max_runtime_seconds(job) == 300
    assert jobs.submitted_at(job) == datetime.fromtimestamp(1795572838, tz=UTC)
    view = jobs.view_queue_job(job)
    assert (view.job_id, view.held, view.pending, view.start) == ("42", True, True, None)


def test_given_account_mapping_then_a_job_without_comment_lands_in_the_mapped_queue():
    job = queued(comment="", account="physics")

    assert jobs.names_fairportal(job, {"physics": "team-physics/main"})
    assert jobs.local_queue_key(job, {"physics": "team-physics/main"}) == "team-physics/main"
    assert not jobs.names_fairportal(job, {})


@pytest.mark.parametrize(
    ("comment", "problem"),
    [
        ("fairportal:Team_A/main", "expected fairportal:<namespace>/<local queue>"),
        ("fairportal:" + "a" * 500, "expected"),
    ],
)
def test_given_malformed_comment_then_rejected_with_a_bounded_message(comment, problem):
    with pytest.raises(jobs.JobRejected) as caught:
        jobs.local_queue_key(queued(comment=comment), {})

    assert problem in str(caught.value)
    assert len(str(caught.value)) < 200


def test_given_memory_in_other_units_then_bytes_are_exact():
    assert jobs.memory_bytes("512M") == 512 * 2**20
    assert jobs.memory_bytes("1.5G") == 1536 * 2**20
    assert jobs.memory_bytes("100") == 100 * 2**20  # Slurm's default unit is MiB
    with pytest.raises(jobs.JobRejected):
        jobs.memory_bytes("lots")


def test_given_tres_fairportal_does_not_count_then_request_is_refused():
    with pytest.raises(jobs.JobRejected, match="requests nothing"):
        jobs.requests_of(queued(tres_req_str="node=1,billing=2"), RESOURCES)


def test_given_unlimited_time_then_no_max_runtime():
    assert jobs.max_runtime_seconds(queued(time_limit=4294967295)) is None
    assert jobs.max_runtime_seconds(queued(time_limit=None)) is None


def test_given_running_and_released_jobs_then_states_are_told_apart():
    running = jobs.view_queue_job(queued(job_state="RUNNING", state_reason="None", priority=100, start_time=1795572900))
    released = jobs.view_queue_job(queued(state_reason="Resources", priority=100))
    requeued_held = jobs.view_queue_job(queued(state_reason="JobHeldUser", priority=0))

    assert running.running and running.start == datetime.fromtimestamp(1795572900, tz=UTC)
    assert released.pending and not released.held
    assert requeued_held.held
    assert jobs.view_queue_job(queued(job_state="FAILED", exit_code=3 << 8)).exit_code == 3


def test_given_sacct_record_then_end_state_and_exit_code_are_read():
    record = {
        "job_id": 7,
        "state": {"current": "FAILED", "reason": "None"},
        "time": {"start": 1795572846, "end": 1795572848, "elapsed": 2},
        "exit_code": {"status": "FAILED", "return_code": 3},
    }

    view = jobs.view_accounting_job(record)

    assert (view.state, view.terminal, view.exit_code) == ("FAILED", True, 3)
    assert (view.end - view.start).total_seconds() == 2


def test_given_requests_then_sbatch_asks_for_them_as_one_task_rounded_up():
    requests = {"cpu": 1500, "memory": (2**30 + 1) * 1000, "nvidia.com/gpu": 2000}

    assert jobs.sbatch_resources(requests, RESOURCES) == [
        "--ntasks=1",
        "--cpus-per-task=2",
        "--mem=1025M",
        "--gres=gpu:2",
    ]


def test_given_resource_without_tres_then_sbatch_arguments_are_refused_naming_it():
    with pytest.raises(jobs.JobRejected, match=r"example\.com/fpga has no Slurm TRES"):
        jobs.sbatch_resources({"cpu": 1000, "example.com/fpga": 1000}, RESOURCES)


@pytest.mark.parametrize(
    ("fields", "problem"),
    [({"array_job_id": 40, "array_task_string": "1-10"}, "job arrays"), ({"het_job_id": 42}, "heterogeneous jobs")],
)
def test_given_many_jobs_under_one_record_then_rejected(fields, problem):
    with pytest.raises(jobs.JobRejected, match=problem):
        jobs.check_supported(queued(**fields))
    jobs.check_supported(queued())  # a plain job is fine
