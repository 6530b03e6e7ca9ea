"""The real local Slurms the backend's tests run against (started by `make test`: `make slurm`).

One cluster per Slurm version (22.05, 24.11, 26.05: deploy/slurm/local-slurm.sh), named by
FAIRPORTAL_SLURM_DIRS (their directories, space-separated; else FAIRPORTAL_SLURM_DIR alone): the
`slurm` fixture runs each test once per cluster, pointing SLURM_CONF, PATH (the version's client
wrappers) and the backend's SLURM_BIN_DIR at it. Helpers submit jobs with Slurm's own `sbatch`,
read Slurm's view with `squeue`/`sacct` (records normalised by jobs.py, so tests compare plain
values on every version), and stop and start slurmctld through the harness for the faults.
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
from typing import Any

import pytest

from queues.backends.slurm import jobs as slurm_jobs

HARNESS = Path(__file__).resolve().parents[3] / "deploy" / "slurm" / "local-slurm.sh"


def _clusters() -> list[tuple[str, Path | None]]:
    """(version, directory) of each cluster the environment names; the version from its cluster.env."""
    names = os.environ.get("FAIRPORTAL_SLURM_DIRS", "").split() or [os.environ.get("FAIRPORTAL_SLURM_DIR", "")]
    found: list[tuple[str, Path | None]] = []
    for name in filter(None, names):
        directory = Path(name).resolve()
        settings = directory / "cluster.env"
        version = "22.05"
        if settings.is_file():
            for line in settings.read_text().splitlines():
                if line.startswith("FAIRPORTAL_SLURM_VERSION="):
                    version = line.split("=", 1)[1].strip()
        found.append((version, directory))
    return found or [("default", None)]


CLUSTERS = _clusters()


def plain(value: Any) -> Any:
    """Slurm 23.02+'s {"set", "infinite", "number"} objects as their numbers (None when unset)."""
    if isinstance(value, dict):
        if set(value) == {"set", "infinite", "number"}:
            return value["number"] if value["set"] and not value["infinite"] else None
        return {key: plain(item) for key, item in value.items()}
    return value


def run(*args: str, check: bool = True) -> str:
    result = subprocess.run(list(args), capture_output=True, text=True, timeout=60, check=False)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


def ctld_answers() -> bool:
    result = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, timeout=30, check=False)
    return "is UP" in result.stdout


def require_slurm() -> None:
    assert os.environ.get("SLURM_CONF"), (
        "SLURM_CONF is not set: run the tests through `make test` (it starts the local Slurm)"
    )
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
    args = [
        "sbatch",
        "--parsable",
        "-o",
        "/dev/null",
        "-e",
        "/dev/null",
        f"--comment=fairportal:{queue}",
        f"--cpus-per-task={cpus}",
        f"--mem={memory}",
        f"--time={minutes}",
        "-J",
        "fp-test",
    ]
    if gpus:
        args.append(f"--gres=gpu:{gpus}")
    if hold:
        args.append("--hold")
    args.extend(extra)
    args.append(f"--wrap=sleep {seconds}; exit {exit_code}")
    return run(*args).strip().split(";")[0]


def queue_records() -> list[dict]:
    """Every job slurmctld holds (`-t all`: 23.02+ leave out ended jobs by default), normalised."""
    return [plain(job) for job in slurm_jobs.queue_jobs(json.loads(run("squeue", "--json", "-t", "all")))]


def queue_job(job_id: str) -> dict | None:
    return next((job for job in queue_records() if str(job["job_id"]) == job_id), None)


def queue_states() -> dict[str, str]:
    """Every job slurmctld holds and its state, in one squeue call."""
    return {str(job["job_id"]): job["job_state"] for job in queue_records()}


def accounting(job_id: str) -> dict:
    """Slurm's accounting record of the job's latest run (`sacct -X`)."""
    document = json.loads(run("sacct", "--json", "-X", "-S", "1970-01-01", "-j", job_id))
    records = [job for job in slurm_jobs.accounting_jobs(document) if str(job["job_id"]) == job_id]
    assert records, f"sacct has no record of job {job_id}"
    return records[-1]


def accounting_runs(job_id: str) -> list[tuple[str, datetime, datetime]]:
    """Every run of the job (requeues included), as (state, start, end) from sacct."""
    document = json.loads(run("sacct", "--json", "-D", "-X", "-S", "1970-01-01", "-j", job_id))
    runs = []
    for job in slurm_jobs.accounting_jobs(document):
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


@pytest.fixture(params=CLUSTERS, ids=[version for version, _ in CLUSTERS])
def slurm(request, settings) -> Iterator[str]:
    """One of the local clusters, by version: the environment and SLURM_BIN_DIR point at it.

    Its own MonkeyPatch: a test's ``monkeypatch.undo()`` must not point the helpers elsewhere."""
    version, directory = request.param
    with pytest.MonkeyPatch.context() as patch:
        if directory is not None:
            bin_dir = directory / "bin"
            patch.setenv("FAIRPORTAL_SLURM_DIR", str(directory))
            patch.setenv("SLURM_CONF", str(directory / "etc" / "slurm.conf"))
            if bin_dir.is_dir():  # a chroot version's client wrappers
                patch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
            settings.SLURM_BIN_DIR = str(bin_dir) if bin_dir.is_dir() else ""
        require_slurm()
        cancel_everything()
        yield version
        if not ctld_answers():
            start_ctld()
        cancel_everything()
