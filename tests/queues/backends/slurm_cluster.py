"""The real local Slurm the backend's tests run against (started by `make test`: `make slurm`).

Helpers submit jobs with Slurm's own `sbatch`, read Slurm's view with `squeue`/`sacct`, and stop
and start slurmctld through the project's harness (deploy/slurm/local-slurm.sh) for the faults.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[3] / "deploy" / "slurm" / "local-slurm.sh"


def run(*args: str, check: bool = True) -> str:
    result = subprocess.run(list(args), capture_output=True, text=True, timeout=60, check=False)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


def ctld_answers() -> bool:
    result = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, timeout=30, check=False)
    return "is UP" in result.stdout


def require_slurm() -> None:
    assert os.environ.get("SLURM_CONF"), "SLURM_CONF is not set: run the tests through `make test` (it starts the local Slurm)"
    if not ctld_answers():  # a fault test that failed half-way may have left slurmctld stopped
        start_ctld()
    assert ctld_answers(), "the local Slurm does not answer: `make slurm` starts it"


def stop_ctld() -> None:
    run(str(HARNESS), "stop-ctld")


def start_ctld() -> None:
    run(str(HARNESS), "start-ctld")


def cancel_everything() -> None:
    """Leave no job of an earlier test behind (the cluster is shared by the tests, one at a time)."""
    ids = run("squeue", "-h", "-o", "%A").split()
    if ids:
        run("scancel", *ids, check=False)
        wait_for(lambda: not run("squeue", "-h", "-t", "R,CG", "-o", "%A").split(), timeout=30)


def sbatch(
    queue: str = "team-a/main",
    *,
    seconds: float = 2,
    cpus: int = 1,
    memory: str = "256M",
    gpus: int = 0,
    exit_code: int = 0,
    hold: bool = True,
    minutes: int = 5,
    extra: tuple[str, ...] = (),
) -> str:
    """Submit a job the way a user does: held, naming its LocalQueue in the comment."""
    args = ["sbatch", "--parsable", "-o", "/dev/null", "-e", "/dev/null", f"--comment=fairportal:{queue}",
            f"--cpus-per-task={cpus}", f"--mem={memory}", f"--time={minutes}", "-J", "fp-test"]
    if gpus:
        args.append(f"--gres=gpu:{gpus}")
    if hold:
        args.append("--hold")
    args.extend(extra)
    args.append(f"--wrap=sleep {seconds}; exit {exit_code}")
    return run(*args).strip().split(";")[0]


def queue_job(job_id: str) -> dict | None:
    document = json.loads(run("squeue", "--json"))
    return next((job for job in document["jobs"] if str(job["job_id"]) == job_id), None)


def queue_states() -> dict[str, str]:
    """Every job slurmctld holds and its state, in one squeue call."""
    return {str(job["job_id"]): job["job_state"] for job in json.loads(run("squeue", "--json"))["jobs"]}


def accounting(job_id: str) -> dict:
    """Slurm's accounting record of the job's latest run (`sacct -X`)."""
    document = json.loads(run("sacct", "--json", "-X", "-S", "1970-01-01", "-j", job_id))
    records = [job for job in document["jobs"] if str(job["job_id"]) == job_id]
    assert records, f"sacct has no record of job {job_id}"
    return records[-1]


def accounting_runs(job_id: str) -> list[tuple[str, datetime, datetime]]:
    """Every run of the job (requeues included), as (state, start, end) from sacct."""
    document = json.loads(run("sacct", "--json", "-D", "-X", "-S", "1970-01-01", "-j", job_id))
    runs = []
    for job in document["jobs"]:
        times = job["time"]
        if times.get("start") and times.get("end"):
            runs.append((job["state"]["current"], epoch(times["start"]), epoch(times["end"])))
    return runs


def epoch(value: int) -> datetime:
    return datetime.fromtimestamp(value, tz=UTC)


def slurm_seconds(job_id: str) -> tuple[datetime, datetime, Decimal]:
    record = accounting(job_id)
    start, end = epoch(record["time"]["start"]), epoch(record["time"]["end"])
    return start, end, Decimal((end - start).total_seconds())


def wait_for(condition: Callable[[], object], timeout: float = 30.0, every: float = 0.3) -> object:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(every)


@pytest.fixture
def slurm() -> Iterator[None]:
    require_slurm()
    cancel_everything()
    yield
    if not ctld_answers():
        start_ctld()
    cancel_everything()
