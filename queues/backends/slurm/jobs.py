"""Reading Slurm job records: which LocalQueue a job names, what it requests, which state it is in.

Pure functions over the dictionaries ``squeue --json`` and ``sacct --json`` print (Slurm's
OpenAPI data model v0.0.38), so they are tested without a cluster and shared by the backend
and the benchmark.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

COMMENT_PREFIX = "fairportal:"
_QUEUE = re.compile(r"^fairportal:([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)/([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)$")
# Slurm memory sizes: a number with an optional binary suffix; M (MiB) when none is given.
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)([KMGTP]?)$")
_MEMORY_UNITS = {"": 2**20, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50}

HELD_REASONS = frozenset({"JobHeldUser", "JobHeldAdmin"})
RUNNING_STATES = frozenset({"RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT"})
# Terminal states and how a workload ends when its job ends so (everything else that ends is a failure).
FINISHED_STATES = frozenset({"COMPLETED"})
CANCELLED_STATES = frozenset({"CANCELLED"})
TERMINAL_STATES = frozenset(
    {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"}
)
INFINITE = {None, 0, 4294967294, 4294967295}  # Slurm's NO_VAL/INFINITE time limits


class JobRejected(ValueError):
    """A job that names fairportal but cannot become a workload (the message says why)."""


@dataclass(frozen=True)
class JobView:
    """The parts of a Slurm job record the backend acts on."""

    job_id: str
    state: str
    held: bool
    start: datetime | None
    end: datetime | None
    reason: str
    exit_code: int | None

    @property
    def running(self) -> bool:
        return self.state in RUNNING_STATES

    @property
    def pending(self) -> bool:
        return self.state == "PENDING" or self.state == "REQUEUED"

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL_STATES


def _moment(epoch: Any) -> datetime | None:
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch <= 0 or epoch >= 4294967294:
        return None
    return datetime.fromtimestamp(epoch, tz=UTC)


def _state(raw: Any) -> str:
    """squeue gives ``"RUNNING"``; sacct ``{"current": "CANCELLED", ...}`` (or "CANCELLED by 0")."""
    if isinstance(raw, Mapping):
        raw = raw.get("current")
    return str(raw or "").split()[0].upper() if raw else ""


def view_queue_job(job: Mapping[str, Any]) -> JobView:
    """A job as ``squeue --json`` prints it."""
    state = _state(job.get("job_state"))
    reason = str(job.get("state_reason") or "")
    return JobView(
        job_id=str(job["job_id"]),
        state=state,
        held=state == "PENDING" and (reason in HELD_REASONS or job.get("priority") == 0),
        start=_moment(job.get("start_time")) if state in RUNNING_STATES or state in TERMINAL_STATES else None,
        end=_moment(job.get("end_time")) if state in TERMINAL_STATES else None,
        reason=reason,
        exit_code=_exit_status(job.get("exit_code")),
    )


def _exit_status(raw: Any) -> int | None:
    """squeue's ``exit_code`` is the raw wait status: the exit code sits in the high byte."""
    if not isinstance(raw, int) or isinstance(raw, bool) or raw < 0:
        return None
    return (raw >> 8) & 0xFF


def view_accounting_job(job: Mapping[str, Any]) -> JobView:
    """A job as ``sacct --json -X`` prints it: Slurm's accounting record, the ledger's source.

    Slurm 22.05's sacct JSON reports ``exit_code`` 0 even for a failed job; the backend takes the
    exit code from squeue's record when it has one."""
    state = _state(job.get("state"))
    times = job.get("time") or {}
    exit_code = job.get("exit_code") or {}
    return JobView(
        job_id=str(job["job_id"]),
        state=state,
        held=False,
        start=_moment(times.get("start")),
        end=_moment(times.get("end")) if state in TERMINAL_STATES else None,
        reason=str((job.get("state") or {}).get("reason") or ""),
        exit_code=exit_code.get("return_code") if isinstance(exit_code, Mapping) else None,
    )


# --- a job's LocalQueue and requests -----------------------------------------------------------


def names_fairportal(job: Mapping[str, Any], account_queues: Mapping[str, str]) -> bool:
    comment = str(job.get("comment") or "")
    return comment.startswith(COMMENT_PREFIX) or str(job.get("account") or "") in account_queues


def local_queue_key(job: Mapping[str, Any], account_queues: Mapping[str, str]) -> str:
    """``namespace/name`` from ``--comment fairportal:<namespace>/<queue>``, else the account map."""
    comment = str(job.get("comment") or "").strip()
    if comment.startswith(COMMENT_PREFIX):
        match = _QUEUE.match(comment)
        if match is None:
            raise JobRejected(f"comment {comment[:80]!r}: expected fairportal:<namespace>/<local queue>")
        return f"{match.group(1)}/{match.group(3)}"
    account = str(job.get("account") or "")
    if account in account_queues:
        return account_queues[account]
    raise JobRejected("no fairportal:<namespace>/<local queue> comment and no SLURM_ACCOUNT_QUEUES entry for its account")


def check_supported(job: Mapping[str, Any]) -> None:
    """Job arrays and heterogeneous jobs are many jobs under one record: not one workload."""
    if job.get("array_task_string") or (job.get("array_job_id") or 0) not in (0, None):
        raise JobRejected("job arrays are not supported: submit each task as its own job")
    if (job.get("het_job_id") or 0) not in (0, None):
        raise JobRejected("heterogeneous jobs are not supported: submit each component as its own job")


def memory_bytes(text: str) -> int:
    match = _MEMORY.match(text.strip().upper())
    if match is None:
        raise JobRejected(f"memory {text[:40]!r}: not a Slurm size")
    return int(float(match.group(1)) * _MEMORY_UNITS[match.group(2)])


def requests_of(job: Mapping[str, Any], resources: Mapping[str, str]) -> dict[str, int]:
    """Total requests in fairportal's millis from the job's requested TRES.

    ``resources`` maps Slurm TRES names to fairportal resource names (``cpu=cpu``,
    ``mem=memory``, ``gres/gpu=nvidia.com/gpu``); TRES it does not list (node, billing) are
    not requests.
    """
    tres = str(job.get("tres_req_str") or "")
    requests: dict[str, int] = {}
    for item in filter(None, tres.split(",")):
        name, _, value = item.partition("=")
        resource = resources.get(name)
        if resource is None:
            continue
        if name == "mem":
            amount = memory_bytes(value) * 1000
        else:
            try:
                amount = int(value) * 1000
            except ValueError:
                raise JobRejected(f"requested {name}={value[:40]!r}: not a whole number") from None
        if amount > 0:
            requests[resource] = requests.get(resource, 0) + amount
    if not requests:
        raise JobRejected(f"requests nothing fairportal counts (TRES {tres[:80]!r})")
    return requests


def max_runtime_seconds(job: Mapping[str, Any]) -> int | None:
    """The time limit (minutes in Slurm) as seconds; None when unlimited."""
    limit = job.get("time_limit")
    if limit in INFINITE or not isinstance(limit, int):
        return None
    return limit * 60


def submitted_at(job: Mapping[str, Any]) -> datetime | None:
    return _moment(job.get("submit_time"))



def sbatch_resources(requests: Mapping[str, int], resources: Mapping[str, str]) -> list[str]:
    """``sbatch`` options asking for ``requests`` (millis) as one task, through ``resources``
    (Slurm TRES -> fairportal resource, read backwards); a resource with no TRES is refused."""
    tres_of = {resource: tres for tres, resource in resources.items()}
    options: list[str] = ["--ntasks=1"]
    for resource, millis in sorted(requests.items()):
        tres = tres_of.get(resource)
        units = math.ceil(millis / 1000)
        if tres == "cpu":
            options.append(f"--cpus-per-task={units}")
        elif tres == "mem":
            options.append(f"--mem={math.ceil(units / 2**20)}M")
        elif tres is not None and tres.startswith("gres/"):
            options.append(f"--gres={tres.removeprefix('gres/')}:{units}")
        else:
            raise JobRejected(f"{resource} has no Slurm TRES to ask for (SLURM_RESOURCES maps {', '.join(sorted(tres_of)) or 'nothing'})")
    return options
