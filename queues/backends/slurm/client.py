"""The ``cli`` transport: Slurm's own command-line tools, called in batches: one command for many jobs.

A large batch is split into a few commands run at once (``SLURM_PARALLEL_CALLS``): scontrol
sends one request per job to slurmctld and waits for each answer, so a few concurrent
commands release many jobs in a fraction of the time one command takes.

The worker runs on a host with Slurm's client tools and a munge key (``SLURM_CONF`` in the
environment names the cluster). Reads use ``squeue --json`` and ``sacct --json`` (Slurm's
OpenAPI data model, the same as slurmrestd's); writes use ``scontrol``/``scancel`` with a
comma-separated job list. A controller that does not answer raises ``BackendUnavailable``;
per-job refusals (a job that already finished, an unknown id) are returned, not raised, so
one stale job never blocks the rest of a batch.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from queues.backends.base import BackendUnavailable, SubmissionRefused
from queues.backends.slurm.transport import CommandResult, calls, check_update_fields

__all__ = ["CommandResult", "SlurmClient"]

# Messages meaning "this job, not the controller": the batch still went through for the others.
_PER_JOB = re.compile(
    r"(already finished|Invalid job id|pending execution|presently disabled|Job is current|"
    r"already held|Access/permission denied|Only batch jobs)",
    re.IGNORECASE,
)
_JOB_IN_MESSAGE = re.compile(r"(?:for job|job id) (\d+)", re.IGNORECASE)
BATCH = 500  # job ids per command line: well below any argument limit
PARALLEL_FROM = 100  # job ids per command before a batch is split over concurrent commands


def _chunks(ids: Sequence[str], size: int = BATCH) -> Iterable[list[str]]:
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


def _pieces(ids: Sequence[str], parallel: int) -> list[list[str]]:
    """``ids`` as command-sized pieces: one below ``PARALLEL_FROM`` ids, else up to ``parallel``
    (more when ``BATCH`` per command would be exceeded)."""
    if not ids:
        return []
    count = max(1, min(parallel, len(ids) // PARALLEL_FROM), math.ceil(len(ids) / BATCH))
    size = math.ceil(len(ids) / count)
    return list(_chunks(ids, size))


class SlurmClient:
    """Runs Slurm commands with a timeout; ``bin_dir`` empty means ``PATH``."""

    def __init__(
        self, *, bin_dir: str = "", timeout: float = 20.0, parallel: int = 4, env: Mapping[str, str] | None = None
    ) -> None:
        if not 1 <= parallel <= 16:
            raise ValueError(f"parallel: between 1 and 16 concurrent commands, got {parallel}")
        self.bin_dir = bin_dir
        self.timeout = timeout
        self.parallel = parallel
        self.env = {**os.environ, **(env or {})}
        self.env.pop("SLURM_TIME_FORMAT", None)  # JSON times are epoch seconds anyway

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = os.path.join(self.bin_dir, args[0]) if self.bin_dir else args[0]
        calls.add()
        try:
            return subprocess.run(
                [command, *args[1:]], capture_output=True, text=True, timeout=self.timeout, env=self.env, check=False
            )
        except FileNotFoundError as error:
            raise BackendUnavailable(
                f"{args[0]} not found: install Slurm's client tools or set SLURM_BIN_DIR"
            ) from error
        except subprocess.TimeoutExpired as error:
            raise BackendUnavailable(f"{args[0]} did not answer within {self.timeout:g}s") from error

    def _json(self, *args: str) -> dict[str, Any]:
        result = self._run(*args)
        try:
            document = json.loads(result.stdout) if result.stdout.strip() else {}
        except json.JSONDecodeError:
            document = {}
        errors = document.get("errors") or []
        if result.returncode != 0 or errors or "jobs" not in document:
            detail = "; ".join(str(e.get("description") or e.get("error")) for e in errors) or _first_line(
                result.stderr
            )
            raise BackendUnavailable(f"{args[0]} failed: {detail or f'exit status {result.returncode}'}")
        return document

    # --- reads ---------------------------------------------------------------------------------

    def jobs(self) -> list[dict[str, Any]]:
        """Every job slurmctld holds: pending, running, and those ended less than MinJobAge ago."""
        return list(self._json("squeue", "--json")["jobs"])

    def accounting(self, job_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The latest accounting record of each job (``sacct -X``: the allocation, not its steps)."""
        records: dict[str, dict[str, Any]] = {}
        for chunk in _chunks(list(job_ids)):
            # -S: sacct only looks back to midnight by default; jobs may be older than that.
            document = self._json("sacct", "--json", "-X", "-S", "1970-01-01", "-j", ",".join(chunk))
            for job in document["jobs"]:
                records[str(job["job_id"])] = job  # later records (after a requeue) replace earlier ones
        return records

    # --- writes ---------------------------------------------------------------------------------

    def submit(self, options: Sequence[str], command: str) -> str:
        """``sbatch --parsable OPTIONS --wrap COMMAND``: the new job's id."""
        result = self._run("sbatch", "--parsable", *options, f"--wrap={command}")
        if result.returncode != 0:
            message = _first_line(result.stderr) or f"exit status {result.returncode}"
            if "Unable to contact" in message or "Socket timed out" in message or "connect failure" in message:
                raise BackendUnavailable(f"sbatch failed: {message}")
            raise SubmissionRefused(message.removeprefix("sbatch: error: "))
        job_id = result.stdout.strip().split(";")[0]
        if not job_id.isdigit():
            raise BackendUnavailable(f"sbatch printed no job id: {result.stdout.strip()[:80]!r}")
        return job_id

    def release(self, job_ids: Sequence[str]) -> CommandResult:
        return self._each("scontrol", "release", job_ids)

    def hold(self, job_ids: Sequence[str]) -> CommandResult:
        return self._each("scontrol", "hold", job_ids)

    def requeue_hold(self, job_ids: Sequence[str]) -> CommandResult:
        return self._each("scontrol", "requeuehold", job_ids)

    def cancel(self, job_ids: Sequence[str]) -> CommandResult:
        return self._batched(lambda chunk: ("scancel", *chunk), "scancel", job_ids)

    def update(self, job_ids: Sequence[str], **fields: str) -> CommandResult:
        """``scontrol update JobId=1,2,3 Partition=gpu StartTime=now``."""
        check_update_fields(fields)
        assignments = [f"{key}={value}" for key, value in fields.items()]
        return self._batched(
            lambda chunk: ("scontrol", "update", f"JobId={','.join(chunk)}", *assignments), "scontrol update", job_ids
        )

    def _each(self, tool: str, verb: str, job_ids: Sequence[str]) -> CommandResult:
        return self._batched(lambda chunk: (tool, verb, ",".join(chunk)), f"{tool} {verb}", job_ids)

    def _batched(
        self, command_for: Callable[[list[str]], tuple[str, ...]], name: str, job_ids: Sequence[str]
    ) -> CommandResult:
        """One command per piece of ``job_ids``, the pieces run at once; refusals of all of them."""
        pieces = _pieces(list(job_ids), self.parallel)
        if len(pieces) <= 1:
            results = [self._run(*command_for(piece)) for piece in pieces]
        else:
            with ThreadPoolExecutor(max_workers=len(pieces)) as pool:
                results = list(pool.map(lambda piece: self._run(*command_for(piece)), pieces))
        refused: dict[str, str] = {}
        for result in results:  # every command ran (or timed out): report the first failure after all
            refused.update(self._check(result, name))
        return CommandResult(refused)

    @staticmethod
    def _check(result: subprocess.CompletedProcess[str], command: str) -> dict[str, str]:
        """Per-job refusals of a batch; anything else that failed means the controller did."""
        if result.returncode == 0:
            return {}
        lines = [line.strip() for line in (result.stderr + "\n" + result.stdout).splitlines() if line.strip()]
        refused: dict[str, str] = {}
        unexplained = []
        for line in lines:
            if line.startswith(("slurm_suspend error", "slurm_update error")):
                continue  # the summary line repeats the last per-job message
            match = _JOB_IN_MESSAGE.search(line)
            if match and _PER_JOB.search(line):
                refused[match.group(1)] = line[:200]
            else:
                unexplained.append(line)
        if unexplained or not refused:
            detail = unexplained[0] if unexplained else f"exit status {result.returncode}"
            raise BackendUnavailable(f"{command} failed: {detail[:200]}")
        return refused


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:200]
