"""A site's real job history as a scenario: ``sacct --json`` dumps and SWF traces.

Pure (no Django): ``read_sacct`` and ``read_swf`` turn a document into ``HistoryJob`` rows,
``to_scenario`` turns rows into a scenario document (``docs/design.md``, "Scenario files")
that ``simulate`` and the playground run. ``synthetic_swf`` writes a seeded multi-user trace.

* sacct: any data_parser version Slurm prints (22.05's OpenAPI v0.0.38, 24.11's v0.0.42,
  26.05's v0.0.45): the records are normalised by ``queues.backends.slurm.jobs`` (the backend's
  own reader), so this module reads only the v0.0.38 shape. Sizes come from the allocated TRES
  (the requested ones when nothing was allocated): ``cpu``, ``mem`` (MiB), ``gres/gpu``.
  Runtime is ``time.elapsed`` (a job still running replays what it ran so far). Jobs that never started (pending, or cancelled before they
  ran) have no runtime and are skipped, as are job-array parents with no allocation; they are
  counted in ``History.skipped``.
* SWF (Parallel Workloads Archive, version 2.2): ``;`` header comments and 18 whitespace-separated
  fields per job; -1 means unknown. Size is the allocated processors (the requested ones when
  unknown), runtime the run time; memory is KB per processor (used, else requested). A
  ``; MaxProcs: N`` header line gives the capacity when ``capacity`` does not; times count
  from the ``; UnixStartTime:`` header (0 without one).
* Layouts: ``account`` (namespace = account, LocalQueue ``account/user``) or ``user`` (one
  namespace and one LocalQueue ``user/jobs`` per user). Every LocalQueue is on one
  ClusterQueue ``pool``; each Slurm partition (SWF partition number) is a flavor of it. The
  scenario format has no node selector, so a job is not pinned to its partition's flavor: the
  engine gives it the first flavor it fits (one partition, the common case, is exact).
* Capacity per flavor and resource: ``capacity`` when given (one amount for all flavors),
  else the largest concurrent allocation the history shows (from its real start and end
  times), so the replay runs the history on the machine it ran on.
* Times are seconds from the period's start (``start``, default the first submission).

Every input is bounded (bytes, jobs, names) and a bad one raises ``ValidationError`` naming the
line and field (SWF) or the job and field (sacct).
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from fairshare.errors import ValidationError
from fairshare.quantities import format_quantity, parse_millis
from fairshare.simulation.traces import pool_size, trace_rows
from fairshare.types import ADMISSION_MODES, NO_FAIR_SHARING
from queues.backends.slurm import jobs as slurm

MAX_HISTORY_BYTES = 5 * 1024 * 1024
MAX_HISTORY_JOBS = 20_000
MAX_NAME_CHARS = 63
MAX_LINE_CHARS = 4096
MAX_EPOCH = 2**33  # the year 2242: later times are not a history
MAX_RUNTIME = 366 * 86400
MAX_SIZE = 10**7  # CPUs or GPUs of one job
FORMATS = ("sacct", "swf")
LAYOUTS = ("account", "user")
POOL = "pool"
DEFAULT_TICK = "1h"
SWF_FIELDS = (
    "job number",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average CPU time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user id",
    "group id",
    "executable",
    "queue number",
    "partition number",
    "preceding job",
    "think time",
)
_RESOURCES = {"cpu": "cpu", "mem": "memory", "gres/gpu": "nvidia.com/gpu"}
_LABEL = re.compile(r"[^a-z0-9-]+")
_MAX_PROCS = re.compile(r"^;\s*MaxProcs:\s*(\d+)\s*$", re.IGNORECASE)
_UNIX_START = re.compile(r"^;\s*UnixStartTime:\s*(\d+)\s*$", re.IGNORECASE)
_MODE_ALIASES = {
    "fifo": NO_FAIR_SHARING,
    "none": NO_FAIR_SHARING,
    "usage": "UsageBasedAdmissionFairSharing",
    "drs": "DominantResourceShare",
    "timeaware": "TimeAware",
}


@dataclass(frozen=True, slots=True)
class HistoryJob:
    """One job as it ran: epoch seconds, amounts in base units (CPUs, bytes, GPUs)."""

    name: str
    user: str
    account: str
    partition: str
    submit: int
    start: int
    runtime: int
    cpus: int
    memory: int = 0
    gpus: int = 0


@dataclass(frozen=True, slots=True)
class History:
    jobs: tuple[HistoryJob, ...]
    skipped: int = 0
    max_procs: int | None = None  # SWF's MaxProcs header
    notes: tuple[str, ...] = field(default=())


def parse_mode(value: str) -> str:
    """An admission mode by its name or a short alias (fifo, usage, drs, timeaware)."""
    mode = _MODE_ALIASES.get(value.strip().lower(), value.strip())
    if mode not in ADMISSION_MODES:
        raise ValidationError(
            "mode", f"one of {', '.join(ADMISSION_MODES)} (or fifo, usage, drs, timeaware), got {value[:40]!r}"
        )
    return mode


def parse_capacity(items: Iterable[str]) -> dict[str, int]:
    """``cpu=512``, ``memory=4Ti``, ``nvidia.com/gpu=16`` -> base units per resource."""
    capacity: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = {"mem": "memory", "gpu": "nvidia.com/gpu"}.get(name.strip(), name.strip())
        if not sep or name not in ("cpu", "memory", "nvidia.com/gpu"):
            raise ValidationError("capacity", f"expected cpu=N, memory=Q or gpu=N, got {item[:40]!r}")
        millis = parse_millis(value.strip(), f"capacity.{name}")
        if millis <= 0:
            raise ValidationError(f"capacity.{name}", f"must be positive, got {value[:40]!r}")
        capacity[name] = math.ceil(millis / 1000)
    return capacity


def parse_date(value: str, field_name: str) -> int:
    """``2026-11-01`` or ``2026-11-01T08:00:00Z`` (UTC when no offset) -> epoch seconds."""
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError(
            field_name, f"expected a date like 2026-11-01 or 2026-11-01T08:00:00Z, got {value[:40]!r}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp())


def label(value: str, field_name: str) -> str:
    """A Slurm user/account/partition name as a DNS label (lowercase, ``-`` for the rest)."""
    if len(value) > 256:
        raise ValidationError(field_name, f"longer than 256 characters ({len(value):,})")
    text = _LABEL.sub("-", value.strip().lower()).strip("-")[:MAX_NAME_CHARS].strip("-")
    if not text:
        raise ValidationError(field_name, f"no usable name in {value[:40]!r}")
    if not text[0].isalpha():
        text = ("u" + text)[:MAX_NAME_CHARS]
    return text


def _check_size(content: str | bytes) -> str:
    if len(content) > MAX_HISTORY_BYTES:
        raise ValidationError("history", f"is larger than {MAX_HISTORY_BYTES // (1024 * 1024)} MiB")
    if isinstance(content, bytes):
        try:
            content = content.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValidationError("history", f"not UTF-8 text (byte {error.start})") from None
    return content


def read_history(content: str | bytes, fmt: str) -> History:
    if fmt == "sacct":
        return read_sacct(content)
    if fmt == "swf":
        return read_swf(content)
    raise ValidationError("format", f"one of {', '.join(FORMATS)}, got {fmt[:20]!r}")


def guess_format(content: str | bytes) -> str:
    head = content[:200].lstrip()
    return "sacct" if head[:1] in ("{", b"{") else "swf"


# --- sacct --json -------------------------------------------------------------------------------


def read_sacct(content: str | bytes | Mapping[str, Any]) -> History:
    """The jobs of an ``sacct --json`` document (Slurm 22.05 to 26.05)."""
    if isinstance(content, Mapping):
        document: Any = content
    else:
        text = _check_size(content)
        try:
            document = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValidationError(f"line {error.lineno}", f"not JSON: {error.msg}") from None
    if not isinstance(document, Mapping):
        raise ValidationError("history", "expected the object sacct --json prints")
    raw_jobs = document.get("jobs")
    if isinstance(raw_jobs, list) and len(raw_jobs) > MAX_HISTORY_JOBS:
        raise ValidationError("jobs", f"at most {MAX_HISTORY_JOBS:,} jobs, got {len(raw_jobs):,}")
    try:
        records = slurm.accounting_jobs(document)
    except slurm.SlurmFormatError as error:
        raise ValidationError("jobs", str(error)) from None
    rows: list[HistoryJob] = []
    skipped = 0
    seen: dict[str, int] = {}
    for index, record in enumerate(records):
        where = f"jobs[{index}]"
        if not isinstance(record, Mapping):
            raise ValidationError(where, "expected a job object")
        job_id = record.get("job_id")
        if not isinstance(job_id, int) or isinstance(job_id, bool):
            raise ValidationError(f"{where}.job_id", f"expected a number, got {str(job_id)[:40]!r}")
        times = record.get("time") or {}
        start, elapsed, submit = times.get("start"), times.get("elapsed"), times.get("submission")
        if not isinstance(submit, int) or not 0 < submit < MAX_EPOCH:
            raise ValidationError(f"{where}.time.submission", f"expected epoch seconds, got {str(submit)[:40]!r}")
        if not isinstance(start, int) or start <= 0 or not isinstance(elapsed, int):
            skipped += 1  # never ran: no runtime to replay
            continue
        if start >= MAX_EPOCH:
            raise ValidationError(f"{where}.time.start", f"expected epoch seconds, got {start}")
        if not 0 <= elapsed <= MAX_RUNTIME:
            raise ValidationError(f"{where}.time.elapsed", f"expected 0 to {MAX_RUNTIME} seconds, got {elapsed}")
        sizes = _sacct_sizes(record, where)
        if sizes is None:
            skipped += 1
            continue
        cpus, memory, gpus = sizes
        base = f"job-{job_id}"
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base}-{seen[base]}"  # a requeued job has several records
        rows.append(
            HistoryJob(
                name=name,
                user=label(str(record.get("user") or "nobody"), f"{where}.user"),
                account=label(str(record.get("account") or "default"), f"{where}.account"),
                partition=label(str(record.get("partition") or "default").split(",")[0], f"{where}.partition"),
                submit=submit,
                start=max(start, submit),
                runtime=max(0, elapsed),
                cpus=cpus,
                memory=memory,
                gpus=gpus,
            )
        )
    return History(tuple(rows), skipped=skipped)


def _sacct_sizes(record: Mapping[str, Any], where: str) -> tuple[int, int, int] | None:
    tres = record.get("tres") or {}
    if not isinstance(tres, Mapping):
        raise ValidationError(f"{where}.tres", "expected an object")
    for part in ("allocated", "requested"):
        items = tres.get(part)
        if not isinstance(items, list):
            continue
        counted = [
            item
            for item in items
            if isinstance(item, Mapping)
            and (str(item.get("type") or "") + (f"/{item['name']}" if item.get("name") else "")) in _RESOURCES
        ]
        if not counted:
            continue
        try:
            requests = slurm.requests_of({"tres": {"requested": counted}}, _RESOURCES)
        except (slurm.SlurmFormatError, slurm.JobRejected) as error:
            raise ValidationError(f"{where}.tres.{part}", str(error)) from None
        cpus = math.ceil(requests.get("cpu", 0) / 1000)
        if cpus <= 0:
            continue
        if cpus > MAX_SIZE or requests.get("nvidia.com/gpu", 0) > MAX_SIZE * 1000:
            raise ValidationError(f"{where}.tres.{part}", f"more than {MAX_SIZE:,} CPUs or GPUs in one job")
        return cpus, math.ceil(requests.get("memory", 0) / 1000), math.ceil(requests.get("nvidia.com/gpu", 0) / 1000)
    return None


# --- SWF ------------------------------------------------------------------------------------------


def read_swf(content: str | bytes) -> History:
    """The jobs of a Standard Workload Format trace."""
    text = _check_size(content)
    rows: list[HistoryJob] = []
    skipped = 0
    max_procs: int | None = None
    unix_start = 0  # SWF times count from the header's UnixStartTime
    for number, line in enumerate(text.splitlines(), start=1):
        if len(line) > MAX_LINE_CHARS:
            raise ValidationError(f"line {number}", f"longer than {MAX_LINE_CHARS:,} characters")
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(";"):
            match = _MAX_PROCS.match(stripped)
            if match:
                max_procs = int(match.group(1)) or None
            match = _UNIX_START.match(stripped)
            if match:
                unix_start = min(int(match.group(1)), 2**33)
            continue
        parts = stripped.split()
        if len(parts) != len(SWF_FIELDS):
            raise ValidationError(f"line {number}", f"expected {len(SWF_FIELDS)} fields, got {len(parts)}")
        values: list[float] = []
        for position, raw in enumerate(parts):
            try:
                value = float(raw)
            except ValueError:
                raise ValidationError(
                    f"line {number} field {position + 1} ({SWF_FIELDS[position]})", f"not a number: {raw[:40]!r}"
                ) from None
            if not math.isfinite(value) or abs(value) > 1e12:
                raise ValidationError(
                    f"line {number} field {position + 1} ({SWF_FIELDS[position]})", f"out of range: {raw[:40]!r}"
                )
            values.append(value)
        if len(rows) >= MAX_HISTORY_JOBS:
            raise ValidationError(f"line {number}", f"at most {MAX_HISTORY_JOBS:,} jobs")
        job, submit, wait, runtime, allocated = values[0], values[1], values[2], values[3], values[4]
        procs = allocated if allocated > 0 else values[7]
        if not 0 <= submit < MAX_EPOCH:
            raise ValidationError(f"line {number} field 2 (submit time)", f"must be 0 to {MAX_EPOCH}, got {parts[1]!r}")
        if runtime < 0 or procs <= 0:
            skipped += 1  # cancelled before it ran, or no size: nothing to replay
            continue
        if runtime > MAX_RUNTIME:
            raise ValidationError(
                f"line {number} field 4 (run time)", f"at most {MAX_RUNTIME} seconds, got {parts[3]!r}"
            )
        if procs > MAX_SIZE:
            raise ValidationError(
                f"line {number} field 5 (allocated processors)", f"at most {MAX_SIZE:,}, got {parts[4]!r}"
            )
        if wait > MAX_RUNTIME * 10:
            raise ValidationError(
                f"line {number} field 3 (wait time)", f"at most {MAX_RUNTIME * 10} seconds, got {parts[2]!r}"
            )
        memory_kb = values[6] if values[6] > 0 else values[9]
        user = int(values[11]) if values[11] >= 0 else 0
        group = int(values[12]) if values[12] >= 0 else 0
        partition = int(values[15]) if values[15] >= 0 else 0
        cpus = int(procs)
        rows.append(
            HistoryJob(
                name=f"job-{int(job)}" if job >= 0 else f"line-{number}",
                user=f"u{user}",
                account=f"g{group}",
                partition=f"p{partition}" if partition > 0 else "default",
                submit=int(submit),
                start=int(submit + max(0.0, wait)),
                runtime=int(runtime),
                cpus=cpus,
                memory=int(memory_kb * 1024 * cpus) if memory_kb > 0 else 0,
            )
        )
    if unix_start:
        rows = [replace(row, submit=row.submit + unix_start, start=row.start + unix_start) for row in rows]
    names = [row.name for row in rows]
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})[:3] if len(names) < 5000 else ["(several)"]
        raise ValidationError("field 1 (job number)", f"job numbers repeat: {', '.join(dupes)}")
    return History(tuple(rows), skipped=skipped, max_procs=max_procs)


# --- the scenario -------------------------------------------------------------------------------


def to_scenario(
    history: History,
    *,
    name: str = "history",
    layout: str = "account",
    mode: str = NO_FAIR_SHARING,
    capacity: Mapping[str, int] | None = None,
    start: int | None = None,
    end: int | None = None,
    tick: str = DEFAULT_TICK,
) -> dict[str, Any]:
    """The scenario document replaying ``history``'s jobs submitted in [start, end)."""
    if layout not in LAYOUTS:
        raise ValidationError("layout", f"one of {', '.join(LAYOUTS)}, got {layout[:20]!r}")
    mode = parse_mode(mode)
    jobs = [j for j in history.jobs if (start is None or j.submit >= start) and (end is None or j.submit < end)]
    if not jobs:
        raise ValidationError("history", "no job that ran was submitted in the period")
    origin = start if start is not None else min(j.submit for j in jobs)
    flavors = sorted({j.partition for j in jobs})
    peak = _peak(jobs)
    quotas = []
    for flavor in flavors:
        resources: dict[str, dict[str, str]] = {}
        for resource in ("cpu", "memory", "nvidia.com/gpu"):
            amount = (capacity or {}).get(resource)
            if amount is None and resource == "cpu" and history.max_procs and len(flavors) == 1:
                amount = history.max_procs
            if amount is None:
                amount = peak.get((flavor, resource), 0)
            if amount > 0 or any(peak.get((other, resource), 0) > 0 for other in flavors):
                # flavors sharing a resource list the same resources (Kueue's resource groups)
                resources[resource] = {"nominal": _quantity(resource, amount)}
        too_big = next((j for j in jobs if j.partition == flavor and j.cpus > _cpu_amount(resources)), None)
        if too_big is not None:
            raise ValidationError(
                "capacity.cpu", f"{_cpu_amount(resources)} CPUs is less than job {too_big.name}'s {too_big.cpus}"
            )
        quotas.append({"flavor": flavor, "resources": resources})
    queues: dict[str, str] = {}
    for job in jobs:
        queues.setdefault(_queue(job, layout), job.account if layout == "account" else job.user)
    workloads = []
    for job in sorted(jobs, key=lambda j: (j.submit, j.name)):
        requests = {"cpu": str(job.cpus)}
        if job.memory:
            requests["memory"] = _quantity("memory", job.memory)
        if job.gpus:
            requests["nvidia.com/gpu"] = str(job.gpus)
        workloads.append(
            {
                "name": job.name,
                "localQueue": _queue(job, layout),
                "submitAt": f"{job.submit - origin}s",
                "duration": f"{max(1, job.runtime)}s",
                "podSets": [{"count": 1, "requests": requests}],
            }
        )
    return {
        "name": label(name, "name"),
        "description": (
            f"{len(jobs):,} jobs of {len({j.user for j in jobs})} users replayed from "
            f"{datetime.fromtimestamp(origin, tz=UTC).isoformat()} ({layout} layout; {history.skipped} records skipped)"
        ),
        "clock": {"tick": tick, "start": datetime.fromtimestamp(origin, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")},
        "resourceFlavors": [{"name": f} for f in flavors],
        "clusterQueues": [
            {
                "name": POOL,
                "queueingStrategy": "BestEffortFIFO",
                "admissionScope": {"admissionMode": mode},
                "quotas": quotas,
            }
        ],
        "namespaces": [{"name": ns} for ns in sorted(set(queues.values()))],
        "localQueues": [{"name": key, "clusterQueue": POOL} for key in sorted(queues)],
        "workloads": workloads,
    }


def _queue(job: HistoryJob, layout: str) -> str:
    return f"{job.account}/{job.user}" if layout == "account" else f"{job.user}/jobs"


def _cpu_amount(resources: Mapping[str, Mapping[str, str]]) -> int:
    return int(resources["cpu"]["nominal"]) if "cpu" in resources else 0


def _quantity(resource: str, amount: int) -> str:
    if resource == "memory":
        return format_quantity(amount * 1000, resource)
    return str(amount)


def _peak(jobs: list[HistoryJob]) -> dict[tuple[str, str], int]:
    """The largest concurrent allocation per (flavor, resource) over the jobs' real run times."""
    events: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for job in jobs:
        for resource, amount in (("cpu", job.cpus), ("memory", job.memory), ("nvidia.com/gpu", job.gpus)):
            if amount > 0:
                points = events.setdefault((job.partition, resource), [])
                points.append((job.start, amount))
                points.append((job.start + max(1, job.runtime), -amount))
    peak: dict[tuple[str, str], int] = {}
    for key, points in events.items():
        level = best = 0
        for _, delta in sorted(points):  # at equal times a release (negative) comes first
            level += delta
            best = max(best, level)
        peak[key] = best
    return peak


def history_scenario(content: str | bytes, fmt: str | None = None, **options: Any) -> dict[str, Any]:
    """``read_history`` then ``to_scenario`` (``fmt`` None: guessed from the first character)."""
    return to_scenario(read_history(content, fmt or guess_format(content)), **options)


# --- a synthetic trace --------------------------------------------------------------------------


def synthetic_swf(seed: int = 752, users: int = 43, jobs: int = 3200, days: float = 10, load: float = 0.97) -> str:
    """A seeded SWF trace of a multi-user site: user activity is Zipf-like (user ``n`` submits in
    proportion to ``1/n``, so a few users submit most jobs and most users few); each user has a
    typical job width (1 to 16 CPUs up to 8 times that, at most 128); runtimes are log-uniform
    from 5 seconds to 17 hours; submissions come in bursts spread over ``days``. ``MaxProcs``
    is set so the offered load is ``load`` of the machine (rounded up to 64 CPUs)."""
    span = int(days * 86400)
    rows = trace_rows(random.Random(seed), users=users, jobs=jobs, span=span)  # the engine's trace, as SWF
    max_procs = pool_size(rows, load=load, span=span)
    lines = [
        "; Version: 2.2",
        "; Computer: synthetic (playground.history.synthetic_swf)",
        f"; Note: seed {seed}, {users} users, {len(rows)} jobs over {days:g} days, offered load {load:g}",
        f"; MaxJobs: {len(rows)}",
        f"; MaxProcs: {max_procs}",
        f"; UnixStartTime: {int(datetime(2026, 11, 2, tzinfo=UTC).timestamp())}",
    ]
    for number, (submit, runtime, procs, user) in enumerate(rows, start=1):
        group = 1 + user % 5
        fields = [number, submit, -1, runtime, procs, -1, -1, procs, runtime * 2, -1, 1, user, group, -1, 1, 1, -1, -1]
        lines.append(" ".join(str(f) for f in fields))
    return "\n".join(lines) + "\n"
