"""Real squeue/sacct JSON from Slurm 22.05, 24.11 and 26.05 (fixtures/record.py recorded the same
jobs on each): the backend reads the same job the same way whichever version printed it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from queues.backends.slurm import jobs

FIXTURES = Path(__file__).resolve().parent / "fixtures"
VERSIONS = {"22.05": (0, 0, 38), "24.11": (0, 0, 42), "26.05": (0, 0, 45)}
RESOURCES = {"cpu": "cpu", "mem": "memory", "gres/gpu": "nvidia.com/gpu"}
ACCOUNTS = {"physics": "team-physics/main"}


def load(version: str, name: str) -> dict:
    return json.loads((FIXTURES / f"slurm-{version}" / name).read_text())


def roles(version: str) -> dict[str, str]:
    return {job_id: role for role, job_id in load(version, "jobs.json")["jobs"].items()}


def queue_by_role(version: str) -> dict[str, dict]:
    parts = roles(version)
    return {parts[str(job["job_id"])]: job for job in jobs.queue_jobs(load(version, "squeue.json"))}


def accounting_by_role(version: str) -> dict[str, dict]:
    parts = roles(version)
    records: dict[str, dict] = {}
    for job in jobs.accounting_jobs(load(version, "sacct.json")):
        records[parts[str(job["job_id"])]] = job  # the latest record of a requeued job wins, as in the client
    return records


def imported(job: dict) -> tuple:
    """What the backend takes from an squeue record when it imports the job."""
    view = jobs.view_queue_job(job)
    try:
        jobs.check_supported(job)
        supported = "ok"
    except jobs.JobRejected as error:
        supported = str(error)
    return (
        view.state,
        view.held,
        view.pending,
        view.running,
        view.start is not None,
        view.exit_code,
        jobs.names_fairportal(job, ACCOUNTS),
        jobs.local_queue_key(job, ACCOUNTS),
        supported,
        jobs.requests_of(job, RESOURCES),
        jobs.max_runtime_seconds(job),
        jobs.submitted_at(job) is not None,
    )


def ended(job: dict) -> tuple:
    view = jobs.view_accounting_job(job)
    seconds = (view.end - view.start).total_seconds() if view.start and view.end else None
    return view.state, view.terminal, view.start is not None, view.end is not None, seconds is not None and seconds >= 0


@pytest.mark.parametrize("version", VERSIONS)
def test_given_each_versions_output_then_its_data_parser_version_is_read(version):
    assert jobs.data_parser(load(version, "squeue.json")) == VERSIONS[version]
    assert jobs.data_parser(load(version, "sacct.json")) == VERSIONS[version]


@pytest.mark.parametrize("version", ["24.11", "26.05"])
def test_given_newer_squeue_then_every_job_reads_as_on_22_05(version):
    old, new = queue_by_role("22.05"), queue_by_role(version)
    # 22.05's squeue also lists jobs that ended (MinJobAge); newer squeue --json lists the live ones
    live = sorted(set(old) & set(new))
    assert live == ["account_mapped", "array", "held", "held_unlimited", "pending_dependency", "requeued", "running"]
    for role in live:
        assert imported(new[role]) == imported(old[role]), role


def test_given_recorded_jobs_then_the_values_are_the_submitted_ones():
    for version in VERSIONS:
        queue = queue_by_role(version)
        assert imported(queue["held"]) == (
            "PENDING",
            True,
            True,
            False,
            False,
            0,
            True,
            "team-a/main",
            "ok",
            {"cpu": 2000, "memory": 2**30 * 1000, "nvidia.com/gpu": 1000},
            300,
            True,
        ), version
        assert jobs.view_queue_job(queue["running"]).running
        assert jobs.requests_of(queue["running"], RESOURCES) == {
            "cpu": 4000,
            "memory": 2 * 2**30 * 1000,
            "nvidia.com/gpu": 2000,
        }
        assert jobs.max_runtime_seconds(queue["held_unlimited"]) is None
        assert jobs.local_queue_key(queue["account_mapped"], ACCOUNTS) == "team-physics/main"
        assert jobs.max_runtime_seconds(queue["account_mapped"]) == 3600
        assert not jobs.view_queue_job(queue["pending_dependency"]).held
        assert jobs.view_queue_job(queue["requeued"]).held
        with pytest.raises(jobs.JobRejected, match="job arrays"):
            jobs.check_supported(queue["array"])


@pytest.mark.parametrize("version", VERSIONS)
def test_given_sacct_then_ended_jobs_read_the_same_and_the_failure_keeps_its_exit_code(version):
    records = accounting_by_role(version)
    assert ended(records["completed"]) == ("COMPLETED", True, True, True, True)
    assert ended(records["cancelled"]) == ("CANCELLED", True, True, True, True)
    assert ended(records["failed"]) == ("FAILED", True, True, True, True)
    assert ended(records["running"]) == ("RUNNING", False, True, False, False)
    assert ended(records["requeued"])[:2] == ("PENDING", False)  # held again after its requeue
    # what the backend reports: sacct's exit code, else squeue's (22.05's sacct says 0)
    exit_code = jobs.view_accounting_job(records["failed"]).exit_code
    if not exit_code:
        exit_code = jobs.view_queue_job(queue_by_role(version)["failed"]).exit_code
    assert exit_code == 3
    assert jobs.requests_of(records["held"], RESOURCES) == {"cpu": 2000, "memory": 2**30 * 1000, "nvidia.com/gpu": 1000}


@pytest.mark.parametrize("version", VERSIONS)
def test_given_requeued_job_then_every_run_reads_as_requeued_then_pending(version):
    runs = [jobs.view_accounting_job(job) for job in jobs.accounting_jobs(load(version, "sacct-requeued.json"))]

    assert [run.state for run in runs] == ["REQUEUED", "PENDING"]
    assert runs[0].start is not None and runs[1].start is None


def test_given_the_same_record_twice_then_normalising_again_changes_nothing():
    raw = load("26.05", "squeue.json")["jobs"][0]
    once = jobs.normalise_queue_job(raw, (0, 0, 45))

    assert jobs.normalise_queue_job(once) == once
    assert jobs.view_queue_job(raw) == jobs.view_queue_job(once)  # a record without its document: told by shape


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("job_state", {"current": 3}, "job_state"),
        ("time_limit", "five minutes", "time_limit"),
        ("priority", [1], "priority"),
        ("exit_code", "3", "exit_code"),
    ],
)
def test_given_a_shape_no_version_prints_then_the_error_names_the_field(field, value, named):
    raw = {**load("26.05", "squeue.json")["jobs"][0], field: value}

    with pytest.raises(jobs.SlurmFormatError, match=rf"^{named}.*data_parser/v0\.0\.99"):
        jobs.queue_jobs({"meta": {"plugins": {"data_parser": "data_parser/v0.0.99"}}, "jobs": [raw]})


def test_given_a_future_version_with_known_shapes_then_it_is_read_best_effort():
    document = {**load("26.05", "squeue.json"), "meta": {"plugins": {"data_parser": "data_parser/v0.0.46"}}}

    assert jobs.data_parser(document) == (0, 0, 46)
    assert [jobs.view_queue_job(job).state for job in jobs.queue_jobs(document)] == [
        jobs.view_queue_job(job).state for job in jobs.queue_jobs(load("26.05", "squeue.json"))
    ]


def test_given_state_flags_then_the_state_is_named_as_22_05_named_it():
    record = {"job_id": 1, "job_state": ["RUNNING", "COMPLETING"], "state_reason": "None"}

    assert jobs.view_queue_job(record).state == "COMPLETING"
    assert jobs.view_queue_job({**record, "job_state": ["PENDING", "REQUEUED"]}).pending


def test_given_signal_in_exit_code_then_the_wait_status_keeps_it():
    record = {
        "job_id": 1,
        "job_state": ["FAILED"],
        "exit_code": {
            "status": ["SIGNALED"],
            "return_code": {"set": False, "infinite": False, "number": 0},
            "signal": {"id": {"set": True, "infinite": False, "number": 9}, "name": "KILL"},
        },
    }

    assert jobs.normalise_queue_job(record)["exit_code"] == 9
    assert jobs.view_queue_job(record).exit_code == 0
