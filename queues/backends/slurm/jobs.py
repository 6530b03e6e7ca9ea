"""Reading Slurm job records: which LocalQueue a job names, what it requests, which state it is in.

Pure functions over the dictionaries ``squeue --json`` and ``sacct --json`` print, so they are
tested without a cluster and shared by the backend and the benchmark. Slurm's JSON changes with
its data_parser version (each document names it in ``meta``): 22.05 prints OpenAPI v0.0.38
(plain strings and integers); 23.02 on (v0.0.39 ... v0.0.45, 24.11 prints v0.0.42, 26.05 v0.0.45)
prints states as lists (``["PENDING", "REQUEUED"]``), integers as ``{"set", "infinite",
"number"}`` objects and exit codes as ``{"status", "return_code", "signal"}``. ``queue_jobs`` and
``accounting_jobs`` read the version and turn every record into the v0.0.38 shape the rest of this
module reads; a record handed over without its document is recognised by its shape. A value of a
shape no known version prints raises ``SlurmFormatError`` naming the field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

COMMENT_PREFIX = "fairportal:"
# The comment of a job fairportal creates itself on the cluster the pass chose (a workload
# submitted with a command to a ClusterQueue over several clusters): ``fairportal-placed:<id>``,
# the workload's id. Never imported as a new workload: a sync links it to that workload (a crash
# between sbatch and the link leaves such a job behind, see ``SlurmBackend._adopt_and_place``).
PLACED_PREFIX = "fairportal-placed:"
_PLACED = re.compile(r"^fairportal-placed:([1-9][0-9]{0,18})$")
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

# data_parser versions whose output this module was checked against (recorded fixtures):
# v0.0.38 (22.05), v0.0.42 (24.11), v0.0.45 (26.05); v0.0.39-v0.0.44 print the same shapes.
LEGACY_PARSER = (0, 0, 38)
KNOWN_PARSERS = frozenset(
    {(0, 0, 38), (0, 0, 39), (0, 0, 40), (0, 0, 41), (0, 0, 42), (0, 0, 43), (0, 0, 44), (0, 0, 45)}
)
_VERSION = re.compile(r"v(\d+)\.(\d+)\.(\d+)")
_NORMALISED = "_fairportal_parser"  # set on a record once it is in the v0.0.38 shape
# A state list (v0.0.39 on) is a base state and flags; 22.05's single string named the first of
# these flags when one was set (job_state_string), else the base state.
_STATE_FLAGS = (
    "COMPLETING",
    "STAGE_OUT",
    "CONFIGURING",
    "RESIZING",
    "REQUEUED",
    "REQUEUE_FED",
    "REQUEUE_HOLD",
    "SPECIAL_EXIT",
    "STOPPED",
    "REVOKED",
    "RESV_DEL_HOLD",
    "SIGNALING",
)
_QUEUE_NUMBERS = (
    "priority",
    "time_limit",
    "submit_time",
    "start_time",
    "end_time",
    "array_job_id",
    "array_task_id",
    "het_job_id",
)
_ACCOUNTING_TIMES = ("start", "end", "submission", "eligible", "elapsed", "limit")


class JobRejected(ValueError):
    """A job that names fairportal but cannot become a workload (the message says why)."""


class SlurmFormatError(ValueError):
    """Slurm printed a field in a shape no known data_parser version prints (the message names it)."""


def data_parser(document: Mapping[str, Any]) -> tuple[int, int, int] | None:
    """The data_parser version a ``--json`` document reports: ``meta.plugins.data_parser``
    (newer), ``meta.plugin.data_parser`` (23.02-26.05) or 22.05's ``meta.plugin.type``
    (``openapi/v0.0.38``, ``openapi/dbv0.0.38``); None when it names none."""
    meta = document.get("meta")
    if not isinstance(meta, Mapping):
        return None
    for section in ("plugins", "plugin"):
        plugin = meta.get(section)
        if not isinstance(plugin, Mapping):
            continue
        for key in ("data_parser", "type"):
            match = _VERSION.search(str(plugin.get(key) or ""))
            if match:
                major, minor, micro = (int(part) for part in match.groups())
                return major, minor, micro
    return None


def parser_name(version: tuple[int, int, int] | None) -> str:
    return "data_parser/v{}.{}.{}".format(*version) if version else "an unnamed data_parser"


def queue_jobs(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The jobs of a ``squeue --json`` document, each in the v0.0.38 shape."""
    version = data_parser(document)
    return [normalise_queue_job(job, version) for job in _jobs(document, version)]


def accounting_jobs(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The jobs of a ``sacct --json`` document, each in the v0.0.38 shape."""
    version = data_parser(document)
    return [normalise_accounting_job(job, version) for job in _jobs(document, version)]


def _jobs(document: Mapping[str, Any], version: tuple[int, int, int] | None) -> Iterable[Mapping[str, Any]]:
    jobs = document.get("jobs")
    if not isinstance(jobs, list):
        raise SlurmFormatError(f"jobs: expected a list from {parser_name(version)}, got {type(jobs).__name__}")
    return jobs


def normalise_queue_job(job: Mapping[str, Any], version: tuple[int, int, int] | None = None) -> dict[str, Any]:
    """An ``squeue --json`` record in the v0.0.38 shape (plain strings and integers).

    ``version`` is the document's data_parser (None: told by the record's shape). Fields this
    module does not read are kept as Slurm printed them."""
    if _NORMALISED in job:
        return dict(job)
    legacy = version is not None and version <= LEGACY_PARSER
    record = dict(job)
    record["job_state"] = _state_name(job.get("job_state"), "job_state", version)
    for field in _QUEUE_NUMBERS:
        if field in job:
            record[field] = _number(job[field], field, version, legacy=legacy)
    if "time_limit" in job and _is_infinite(job["time_limit"]):
        record["time_limit"] = None
    record["exit_code"] = _wait_status(job.get("exit_code"), "exit_code", version)
    record["comment"] = _comment(job.get("comment"))
    record[_NORMALISED] = parser_name(version)
    return record


def normalise_accounting_job(job: Mapping[str, Any], version: tuple[int, int, int] | None = None) -> dict[str, Any]:
    """An ``sacct --json`` record in the v0.0.38 shape: ``state.current`` a string, ``time.*``
    and ``exit_code.return_code`` plain integers (None when unset or unlimited)."""
    if _NORMALISED in job:
        return dict(job)
    legacy = version is not None and version <= LEGACY_PARSER
    record = dict(job)
    state = job.get("state")
    if isinstance(state, Mapping):
        record["state"] = {**state, "current": _state_name(state.get("current"), "state.current", version)}
    elif state is not None:
        raise SlurmFormatError(f"state: expected an object from {parser_name(version)}, got {type(state).__name__}")
    times = job.get("time")
    if isinstance(times, Mapping):
        record["time"] = {
            **times,
            **{
                key: _number(times[key], f"time.{key}", version, legacy=legacy)
                for key in _ACCOUNTING_TIMES
                if key in times
            },
        }
        if "limit" in times and _is_infinite(times["limit"]):
            record["time"]["limit"] = None
    elif times is not None:
        raise SlurmFormatError(f"time: expected an object from {parser_name(version)}, got {type(times).__name__}")
    exit_code = job.get("exit_code")
    if isinstance(exit_code, Mapping):
        status = exit_code.get("status")
        record["exit_code"] = {
            **exit_code,
            "status": status[0] if isinstance(status, list) and status else status,
            "return_code": _number(exit_code.get("return_code"), "exit_code.return_code", version, legacy=legacy),
        }
    for section, field in (("array", "job_id"), ("het", "job_id")):
        value = job.get(section)
        if isinstance(value, Mapping) and field in value:
            record[section] = {**value, field: _number(value[field], f"{section}.{field}", version, legacy=legacy)}
    record[_NORMALISED] = parser_name(version)
    return record


def _number(value: Any, field: str, version: tuple[int, int, int] | None, *, legacy: bool = False) -> int | None:
    """A plain integer (v0.0.38) or ``{"set": bool, "infinite": bool, "number": int}``: the
    integer, None when unset or infinite."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping) and not legacy and "number" in value:
        if value.get("infinite") or not value.get("set", True):
            return None
        return _number(value.get("number"), field, version)
    raise SlurmFormatError(f"{field}: expected a number from {parser_name(version)}, got {_shape(value)}")


def _is_infinite(value: Any) -> bool:
    return isinstance(value, Mapping) and bool(value.get("infinite"))


def _state_name(raw: Any, field: str, version: tuple[int, int, int] | None) -> str:
    """``"RUNNING"`` (v0.0.38, sacct may say "CANCELLED by 0") or ``["PENDING", "REQUEUED"]``."""
    if raw is None or raw == "":
        return ""
    if isinstance(raw, str):
        return raw.split()[0].upper()
    if isinstance(raw, list) and all(isinstance(item, str) for item in raw):
        names = [item.upper() for item in raw]
        return next((flag for flag in _STATE_FLAGS if flag in names), names[0] if names else "")
    raise SlurmFormatError(
        f"{field}: expected a state name or a list of them from {parser_name(version)}, got {_shape(raw)}"
    )


def _wait_status(raw: Any, field: str, version: tuple[int, int, int] | None) -> int | None:
    """squeue's exit code as v0.0.38 printed it (the raw wait status: code in the high byte,
    signal in the low bits) from either shape."""
    if raw is None or (isinstance(raw, int) and not isinstance(raw, bool)):
        return raw
    if isinstance(raw, Mapping):
        code = _number(raw.get("return_code"), f"{field}.return_code", version)
        signal = raw.get("signal")
        number = _number(signal.get("id"), f"{field}.signal.id", version) if isinstance(signal, Mapping) else None
        if code is None and number is None:
            return None
        return ((code or 0) & 0xFF) << 8 | ((number or 0) & 0x7F)
    raise SlurmFormatError(f"{field}: expected an exit code from {parser_name(version)}, got {_shape(raw)}")


def _comment(raw: Any) -> str:
    """squeue prints the comment as a string; sacct as ``{"job": ..., "administrator": ...}``."""
    if isinstance(raw, Mapping):
        raw = raw.get("job")
    return str(raw or "")


def _shape(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"


def _queued(job: Mapping[str, Any]) -> Mapping[str, Any]:
    return job if _NORMALISED in job else normalise_queue_job(job)


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


def view_queue_job(job: Mapping[str, Any]) -> JobView:
    """A job as ``squeue --json`` prints it (any data_parser version)."""
    job = _queued(job)
    state = str(job.get("job_state") or "")
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

    Slurm 22.05's sacct JSON reports ``exit_code`` 0 even for a failed job (24.11 on report it);
    the backend takes the exit code from squeue's record when it has one."""
    if _NORMALISED not in job:
        job = normalise_accounting_job(job)
    state_record = job.get("state") or {}
    state = str(state_record.get("current") or "")
    times = job.get("time") or {}
    exit_code = job.get("exit_code") or {}
    return_code = exit_code.get("return_code") if isinstance(exit_code, Mapping) else None
    return JobView(
        job_id=str(job["job_id"]),
        state=state,
        held=False,
        start=_moment(times.get("start")),
        end=_moment(times.get("end")) if state in TERMINAL_STATES else None,
        reason=str(state_record.get("reason") or ""),
        exit_code=return_code if isinstance(return_code, int) else None,
    )


# --- a job's LocalQueue and requests -----------------------------------------------------------


def names_fairportal(job: Mapping[str, Any], account_queues: Mapping[str, str]) -> bool:
    """Whether a job is one for the sync to import (not one fairportal placed itself)."""
    comment = _comment(job.get("comment"))
    if comment.startswith(PLACED_PREFIX):
        return False
    return comment.startswith(COMMENT_PREFIX) or str(job.get("account") or "") in account_queues


def placed_workload(job: Mapping[str, Any]) -> int | None:
    """The workload id a job fairportal placed names in its comment (None: not such a job)."""
    match = _PLACED.match(_comment(job.get("comment")).strip())
    return int(match.group(1)) if match else None


def local_queue_key(job: Mapping[str, Any], account_queues: Mapping[str, str]) -> str:
    """``namespace/name`` from ``--comment fairportal:<namespace>/<queue>``, else the account map."""
    comment = _comment(job.get("comment")).strip()
    if comment.startswith(COMMENT_PREFIX):
        match = _QUEUE.match(comment)
        if match is None:
            raise JobRejected(f"comment {comment[:80]!r}: expected fairportal:<namespace>/<local queue>")
        return f"{match.group(1)}/{match.group(3)}"
    account = str(job.get("account") or "")
    if account in account_queues:
        return account_queues[account]
    raise JobRejected(
        "no fairportal:<namespace>/<local queue> comment and no SLURM_ACCOUNT_QUEUES entry for its account"
    )


def check_supported(job: Mapping[str, Any]) -> None:
    """Job arrays and heterogeneous jobs are many jobs under one record: not one workload."""
    job = _queued(job)
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
    tres = job.get("tres_req_str")
    if not isinstance(tres, str):
        tres = _tres_string(job.get("tres"), "tres_req_str")
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


def _tres_string(tres: Any, field: str) -> str:
    """sacct's ``tres.requested`` list (``{"type": "gres", "name": "gpu", "count": 1}``, memory
    in MiB) as the ``cpu=2,mem=1024M,gres/gpu=1`` string squeue prints."""
    requested = tres.get("requested") if isinstance(tres, Mapping) else None
    if not isinstance(requested, list):
        raise SlurmFormatError(f"{field}: missing, and no tres.requested list to read instead")
    items = []
    for item in requested:
        if not isinstance(item, Mapping) or not isinstance(item.get("count"), int):
            raise SlurmFormatError(f"tres.requested: expected {{type, name, count}} items, got {_shape(item)}")
        name = str(item.get("type") or "") + (f"/{item['name']}" if item.get("name") else "")
        items.append(f"{name}={item['count']}M" if name == "mem" else f"{name}={item['count']}")
    return ",".join(items)


def max_runtime_seconds(job: Mapping[str, Any]) -> int | None:
    """The time limit (minutes in Slurm) as seconds; None when unlimited."""
    limit = _queued(job).get("time_limit")
    if limit in INFINITE or not isinstance(limit, int):
        return None
    return limit * 60


def submitted_at(job: Mapping[str, Any]) -> datetime | None:
    return _moment(_queued(job).get("submit_time"))


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
            raise JobRejected(
                f"{resource} has no Slurm TRES to ask for (SLURM_RESOURCES maps {', '.join(sorted(tres_of)) or 'nothing'})"
            )
    return options
