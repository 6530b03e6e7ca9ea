"""The ``rest`` transport: slurmrestd over HTTP, authenticated with a JWT (Slurm's ``auth/jwt``).

For workers without Slurm's tools or a munge key. ``SLURM_REST_URL`` names slurmrestd,
``SLURM_JWT`` (or ``SLURM_JWT_FILE``, re-read when it changes, for rotated tokens) the token,
``SLURM_REST_USER`` the ``X-SLURM-USER-NAME`` header. The data_parser version (``v0.0.41``
...) is the newest one the server advertises in ``/openapi/v3`` that has every path used here,
or ``SLURM_REST_VERSION``.

Paths (``{v}`` the version):

- ``GET /slurm/{v}/jobs/``: every job slurmctld holds (what ``squeue --json`` prints);
- ``GET /slurmdb/{v}/jobs/?step=1,2``: accounting records (what ``sacct --json`` prints);
- ``POST /slurm/{v}/job/submit``: a batch job from a job description;
- ``POST /slurm/{v}/job/{id}``: a job update (``hold``, ``partition``, ``begin_time``,
  ``admin_comment``), one job per request: many jobs are sent over a few kept-alive connections
  at once (``SLURM_PARALLEL_CALLS``);
- ``DELETE /slurm/{v}/job/{id}``: cancel.

Slurm 26.05's API (v0.0.45) requeues held (``POST /slurm/{v}/jobs/requeue``, flag ``Hold``) and
24.11's (v0.0.42) cancels many jobs in one request (``DELETE /slurm/{v}/jobs/``); both are used
where the server advertises them. Before v0.0.45 slurmrestd cannot requeue: ``requeue_hold``
holds jobs that have not started and reports running ones as refused (they keep running until
they end; the cli transport requeues them).

Every request has a timeout (``SLURM_COMMAND_TIMEOUT``); a server that does not answer, or
answers 5xx for everything, raises ``BackendUnavailable`` as the cli transport does. The token
is sent only in its header: it is never logged, and any message that reaches an error, the
admin or the dashboard has it replaced by ``[token]``.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import requests

from queues.backends.base import BackendUnavailable, SubmissionRefused
from queues.backends.slurm.transport import CommandResult, calls, check_update_fields

VERSION = re.compile(r"^v0\.0\.(\d{2})$")
MIN_VERSION = 40  # v0.0.40 (Slurm 23.11) and later: the job update and description fields used here
MAX_RESPONSE_BYTES = 256 * 2**20  # a squeue of every job of a busy cluster stays well below this
MAX_TOKEN_BYTES = 16 * 2**10
MAX_IDS_PER_QUERY = 500  # job ids per accounting query string
_PER_JOB = re.compile(
    r"(already finished|already completed|Invalid job id|does not exist|pending execution|Job is current|"
    r"already held|Access/permission denied|Only batch jobs|Requested operation is presently disabled|"
    r"Job/step already completing or completed)",
    re.IGNORECASE,
)
_JOB_IN_MESSAGE = re.compile(r"JobId=(\d+)")
_SBATCH_OPTION = re.compile(r"^--([a-z-]+)=(.*)$", re.DOTALL)


class SlurmRestError(BackendUnavailable):
    """slurmrestd answered, but not with what was asked for (the message says why)."""


def _uint(value: int) -> dict[str, Any]:
    """Slurm's ``uint32_no_val`` / ``uint64_no_val`` object (v0.0.40+)."""
    return {"set": True, "infinite": False, "number": value}


class SlurmRestClient:
    """slurmrestd with a JWT; the same interface as the cli transport (``SlurmTransport``)."""

    def __init__(
        self,
        url: str,
        *,
        token: str = "",
        token_file: str = "",
        user: str = "",
        version: str = "",
        timeout: float = 20.0,
        parallel: int = 4,
    ) -> None:
        url = url.strip()
        if not re.match(r"^https?://[^\s/?#]+(/[^\s?#]*)?$", url) or len(url) > 2000:
            raise ValueError("SLURM_REST_URL: expected http(s)://host[:port][/path], at most 2000 characters")
        if bool(token) == bool(token_file):
            raise ValueError("SLURM_JWT or SLURM_JWT_FILE: set exactly one (the token slurmrestd accepts)")
        if token and (len(token) > MAX_TOKEN_BYTES or not token.isascii() or any(c.isspace() for c in token.strip())):
            raise ValueError("SLURM_JWT: not a token (one line of ASCII, at most 16 KiB)")
        if user and not re.match(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$", user):
            raise ValueError("SLURM_REST_USER: a user name of up to 64 letters, digits, '.', '_' or '-'")
        if version and not VERSION.match(version):
            raise ValueError("SLURM_REST_VERSION: expected v0.0.NN, e.g. v0.0.41")
        if not 0 < timeout <= 600:
            raise ValueError("timeout: between 0 and 600 seconds")
        if not 1 <= parallel <= 16:
            raise ValueError(f"parallel: between 1 and 16 concurrent requests, got {parallel}")
        self.url = url.rstrip("/")
        self.user = user
        self.timeout = timeout
        self.parallel = parallel
        self._token = token.strip()
        self._token_file = token_file
        self._token_stamp: tuple[int, int] | None = None
        self._version = version
        self._paths: frozenset[str] | None = None
        self._lock = threading.Lock()
        self._session = requests.Session()
        self._session.trust_env = False  # no proxy or netrc from the environment: the token goes to slurmrestd only
        adapter = requests.adapters.HTTPAdapter(pool_connections=1, pool_maxsize=parallel)
        self._session.mount("http://", adapter)
        self._session.mount("https://", adapter)

    @classmethod
    def from_settings(cls) -> SlurmRestClient:
        from django.conf import settings

        return cls(
            settings.SLURM_REST_URL,
            token=os.environ.get("SLURM_JWT", ""),
            token_file=settings.SLURM_JWT_FILE,
            user=settings.SLURM_REST_USER,
            version=settings.SLURM_REST_VERSION,
            timeout=settings.SLURM_COMMAND_TIMEOUT_SECONDS,
            parallel=settings.SLURM_PARALLEL_CALLS,
        )

    def __repr__(self) -> str:  # never the token
        return f"SlurmRestClient({self.url!r}, version={self._version or 'advertised'!r})"

    # --- the token, and keeping it out of every message ------------------------------------------

    def _current_token(self) -> str:
        if not self._token_file:
            return self._token
        try:
            status = os.stat(self._token_file)
            stamp = (status.st_mtime_ns, status.st_size)
            if stamp != self._token_stamp:
                if status.st_size > MAX_TOKEN_BYTES:
                    raise BackendUnavailable(f"SLURM_JWT_FILE {self._token_file}: larger than 16 KiB, not a token")
                with open(self._token_file, encoding="ascii") as handle:
                    token = handle.read().strip()
                if not token or any(c.isspace() for c in token):
                    raise BackendUnavailable(f"SLURM_JWT_FILE {self._token_file}: not one token on one line")
                self._token, self._token_stamp = token, stamp
        except (OSError, UnicodeDecodeError) as error:
            raise BackendUnavailable(
                f"SLURM_JWT_FILE {self._token_file}: cannot read it ({type(error).__name__})"
            ) from None
        return self._token

    def _scrub(self, text: str) -> str:
        return text.replace(self._token, "[token]") if self._token else text

    # --- requests ----------------------------------------------------------------------------

    def _request(
        self, method: str, path: str, *, body: Any = None, params: Mapping[str, str] | None = None
    ) -> tuple[int, dict[str, Any]]:
        """One request: its status and JSON document. Unreachable, timed out, 401/403, a
        document that is not JSON: ``BackendUnavailable`` (the token never in the message)."""
        headers = {"X-SLURM-USER-TOKEN": self._current_token(), "Accept": "application/json"}
        if self.user:
            headers["X-SLURM-USER-NAME"] = self.user
        calls.add()
        deadline = time.monotonic() + 2 * self.timeout
        try:
            response = self._session.request(
                method,
                f"{self.url}{path}",
                json=body,
                params=params,
                headers=headers,
                timeout=self.timeout,
                stream=True,
            )
            try:
                chunks, size = [], 0
                for chunk in response.iter_content(chunk_size=1 << 16):
                    size += len(chunk)
                    if size > MAX_RESPONSE_BYTES:
                        raise SlurmRestError(
                            f"slurmrestd {method} {path}: answer larger than {MAX_RESPONSE_BYTES >> 20} MiB"
                        )
                    if time.monotonic() > deadline:  # the timeout bounds each read; this, the whole answer
                        raise requests.Timeout()
                    chunks.append(chunk)
            finally:
                response.close()
        except requests.Timeout:
            raise BackendUnavailable(f"slurmrestd at {self.url} did not answer within {self.timeout:g}s") from None
        except requests.RequestException as error:
            raise BackendUnavailable(f"slurmrestd at {self.url} is unreachable ({type(error).__name__})") from None
        if response.status_code in (401, 403):
            raise SlurmRestError(
                f"slurmrestd refused the credentials (HTTP {response.status_code}): check SLURM_JWT/SLURM_JWT_FILE "
                "and SLURM_REST_USER"
            )
        try:
            document = json.loads(b"".join(chunks) or b"{}")
        except ValueError:
            raise SlurmRestError(f"slurmrestd {method} {path}: HTTP {response.status_code}, not JSON") from None
        if not isinstance(document, dict):
            raise SlurmRestError(f"slurmrestd {method} {path}: HTTP {response.status_code}, not a JSON object")
        errors = self._errors(document)
        if any("authentication" in error.lower() for error in errors):  # slurmctld refused the token
            raise SlurmRestError(
                f"slurmrestd {method} {path}: {errors[0]} (check SLURM_JWT/SLURM_JWT_FILE and SLURM_REST_USER)"
            )
        return response.status_code, document

    def _errors(self, document: Mapping[str, Any]) -> list[str]:
        """Slurm's errors in the answer, and warnings that a field was ignored (a request that
        did not do what it said must not pass for done)."""
        messages = []
        errors = document.get("errors") or []
        for error in errors if isinstance(errors, list) else []:
            if isinstance(error, Mapping):
                parts = [str(error.get(key)) for key in ("error", "description") if error.get(key)]
                text = ": ".join(dict.fromkeys(parts)) or str(error.get("error_number") or "error")
                messages.append(self._scrub(text)[:200])
        warnings = document.get("warnings") or []
        for warning in warnings if isinstance(warnings, list) else []:
            if isinstance(warning, Mapping) and "Ignoring unknown field" in str(warning.get("description")):
                messages.append(self._scrub(str(warning["description"]))[:200])
        return messages

    def _read(self, path: str, params: Mapping[str, str] | None = None) -> dict[str, Any]:
        status, document = self._request("GET", path, params=params)
        errors = self._errors(document)
        if status >= 400 or errors or not isinstance(document.get("jobs"), list):
            raise SlurmRestError(f"slurmrestd GET {path} failed: {'; '.join(errors) or f'HTTP {status}'}")
        return document

    # --- the data_parser version -------------------------------------------------------------

    def version(self) -> str:
        """``SLURM_REST_VERSION``, else the newest version the server advertises with every path used."""
        with self._lock:
            if self._paths is None:
                self._paths = self._advertised_paths()
                if not self._version:
                    self._version = self._newest(self._paths)
            return self._version

    def _has(self, path: str) -> bool:
        """Whether the server advertises ``path`` (``{v}`` for the version), e.g. a batch requeue."""
        version = self.version()
        return path.replace("{v}", version) in (self._paths or frozenset())

    def _advertised_paths(self) -> frozenset[str]:
        status, document = self._request("GET", "/openapi/v3")
        paths = document.get("paths")
        if status >= 400 or not isinstance(paths, Mapping):
            if self._version:
                return frozenset()  # the configured version, with the paths every version has
            raise SlurmRestError(f"slurmrestd GET /openapi/v3: HTTP {status}, no paths (set SLURM_REST_VERSION)")
        return frozenset(str(path) for path in paths)

    @staticmethod
    def _newest(paths: frozenset[str]) -> str:
        usable = []
        for path in paths:
            match = re.match(r"^/slurm/(v0\.0\.(\d{2}))/jobs/?$", str(path))
            if match and int(match.group(2)) >= MIN_VERSION:
                version = match.group(1)
                needed = (f"/slurm/{version}/job/{{job_id}}", f"/slurm/{version}/job/submit")
                if all(p in paths for p in needed) and any(
                    str(p).startswith(f"/slurmdb/{version}/jobs") for p in paths
                ):
                    usable.append(version)
        if not usable:
            raise SlurmRestError(
                "slurmrestd advertises no data_parser v0.0.40 or later with jobs, job and slurmdb jobs paths"
            )
        return max(usable, key=lambda v: int(v.rsplit(".", 1)[1]))

    # --- reads ---------------------------------------------------------------------------------

    def jobs(self) -> list[dict[str, Any]]:
        return list(self._read(f"/slurm/{self.version()}/jobs/")["jobs"])

    def accounting(self, job_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        records: dict[str, dict[str, Any]] = {}
        ids = [str(job_id) for job_id in job_ids]
        for start in range(0, len(ids), MAX_IDS_PER_QUERY):
            chunk = ids[start : start + MAX_IDS_PER_QUERY]
            # start_time: slurmdbd, like sacct, looks back to midnight only unless told otherwise
            document = self._read(
                f"/slurmdb/{self.version()}/jobs/", {"step": ",".join(chunk), "start_time": "1", "skip_steps": "true"}
            )
            for job in document["jobs"]:
                records[str(job["job_id"])] = job  # later records (after a requeue) replace earlier ones
        return records

    # --- writes ---------------------------------------------------------------------------------

    def submit(self, options: Sequence[str], command: str) -> str:
        """A batch job from ``sbatch``-style options (those the backend uses) running ``command``."""
        job = job_description(options, command)
        status, document = self._request("POST", f"/slurm/{self.version()}/job/submit", body={"job": job})
        errors = self._errors(document)
        job_id = document.get("job_id") or (document.get("result") or {}).get("job_id")
        if status >= 500 and not errors:
            raise SlurmRestError(f"slurmrestd job submit: HTTP {status}")
        if errors or status >= 400:
            raise SubmissionRefused("; ".join(errors) or f"HTTP {status}")
        if not isinstance(job_id, int) and not str(job_id or "").isdigit():
            raise SlurmRestError("slurmrestd job submit: the answer names no job id")
        return str(job_id)

    def release(self, job_ids: Sequence[str]) -> CommandResult:
        return self._each(job_ids, lambda job_id: self._update(job_id, {"hold": False}))

    def hold(self, job_ids: Sequence[str]) -> CommandResult:
        return self._each(job_ids, lambda job_id: self._update(job_id, {"hold": True}))

    def requeue_hold(self, job_ids: Sequence[str]) -> CommandResult:
        """``POST /slurm/{v}/jobs/requeue`` with the Hold flag where the server has it (v0.0.45,
        Slurm 26.05); else hold what has not started and refuse running jobs (no requeue)."""
        if not self._has("/slurm/{v}/jobs/requeue"):
            running = {
                str(job["job_id"])
                for job in self.jobs()
                if _state(job.get("job_state")) in {"RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED"}
            }
            held = self.hold([job_id for job_id in job_ids if str(job_id) not in running])
            refused = {
                str(job_id): f"slurmrestd {self.version()} has no requeue: job {job_id} keeps running (Slurm 26.05's"
                " API or SLURM_TRANSPORT=cli requeue it)"
                for job_id in job_ids
                if str(job_id) in running
            }
            return CommandResult({**held.refused, **refused})
        return self._batch("POST", "/slurm/{v}/jobs/requeue", job_ids, lambda ids: {"flags": ["Hold"], "jobs": ids})

    def cancel(self, job_ids: Sequence[str]) -> CommandResult:
        """``DELETE /slurm/{v}/jobs/`` for many jobs where the server has it (v0.0.42+), else one
        ``DELETE /slurm/{v}/job/{id}`` per job."""
        if not self._has("/slurm/{v}/jobs/"):
            return self._each(job_ids, lambda job_id: self._call("DELETE", job_id, None))
        return self._batch("DELETE", "/slurm/{v}/jobs/", job_ids, lambda ids: {"jobs": ids, "signal": "SIGKILL"})

    def _batch(
        self, method: str, path: str, job_ids: Sequence[str], body: Callable[[list[str]], dict[str, Any]]
    ) -> CommandResult:
        """One request per ``MAX_IDS_PER_QUERY`` jobs; the per-job failures it lists are refusals."""
        refused: dict[str, str] = {}
        ids = [_job_id(job_id) for job_id in job_ids]
        for start in range(0, len(ids), MAX_IDS_PER_QUERY):
            chunk = ids[start : start + MAX_IDS_PER_QUERY]
            status, document = self._request(method, path.replace("{v}", self.version()), body=body(chunk))
            listed = document.get("status")
            failures: list[Any] = listed if isinstance(listed, list) else []
            for failure in failures:
                if not isinstance(failure, Mapping):
                    continue
                error = failure.get("error") or {}
                code = error.get("code") if isinstance(error, Mapping) else None
                job = failure.get("job_id")
                job = job.get("number") if isinstance(job, Mapping) else job
                if code and str(job) in chunk:
                    refused[str(job)] = self._scrub(str(error.get("message") or error.get("string") or code))[:200]
            unexplained = []
            for error in self._errors(document):  # 26.05 reports a batch's per-job failures as errors
                match = _JOB_IN_MESSAGE.search(error)
                if match and match.group(1) in chunk and _PER_JOB.search(error):
                    refused[match.group(1)] = error
                else:
                    unexplained.append(error)
            if unexplained or (status >= 400 and not refused):
                detail = "; ".join(unexplained[:3]) or f"HTTP {status}"
                raise SlurmRestError(f"slurmrestd {method} {path.replace('{v}', self.version())} failed: {detail}")
        return CommandResult(refused)

    def update(self, job_ids: Sequence[str], **fields: str) -> CommandResult:
        check_update_fields(fields)
        change: dict[str, Any] = {}
        for key, value in fields.items():
            if key == "Partition":
                change["partition"] = value
            elif key == "AdminComment":
                change["admin_comment"] = value[:250]
            elif key == "StartTime":
                if value != "now":
                    raise ValueError("update: StartTime: only 'now' is supported")
                change["begin_time"] = _uint(int(datetime.now(tz=UTC).timestamp()))
        return self._each(job_ids, lambda job_id: self._update(job_id, change))

    def _update(self, job_id: str, change: Mapping[str, Any]) -> str | None:
        # the update's body is the job description itself (a submission wraps it in "job")
        return self._call("POST", job_id, dict(change))

    def _call(self, method: str, job_id: str, body: Any) -> str | None:
        """One job's request: None when it applied, Slurm's message when Slurm refused this job."""
        status, document = self._request(method, f"/slurm/{self.version()}/job/{_job_id(job_id)}", body=body)
        errors = self._errors(document)
        if status < 400 and not errors:
            return None
        message = "; ".join(errors) or f"HTTP {status}"
        if _PER_JOB.search(message):
            return message[:200]
        raise SlurmRestError(f"slurmrestd {method} job {job_id} failed: {message[:200]}")

    def _each(self, job_ids: Sequence[str], call: Callable[[str], str | None]) -> CommandResult:
        ids = [str(job_id) for job_id in job_ids]
        if len(ids) <= 1 or self.parallel == 1:
            outcomes = [call(job_id) for job_id in ids]
        else:
            with ThreadPoolExecutor(max_workers=min(self.parallel, len(ids))) as pool:
                outcomes = list(pool.map(call, ids))
        return CommandResult({job_id: message for job_id, message in zip(ids, outcomes) if message is not None})


def _state(raw: Any) -> str:
    """A job's state: ``["RUNNING"]`` (v0.0.40+) or ``"RUNNING"``."""
    if isinstance(raw, list):
        raw = raw[0] if raw else ""
    return str(raw or "").upper()


def _job_id(job_id: str) -> str:
    text = str(job_id)
    if not text.isdigit() or len(text) > 12:
        raise ValueError(f"job id {text[:20]!r}: not a Slurm job id")
    return text


def job_description(options: Sequence[str], command: str) -> dict[str, Any]:
    """slurmrestd's job description for ``sbatch OPTIONS --wrap COMMAND`` (the options
    ``SlurmBackend.submit`` passes; any other is refused, naming it)."""
    if not command.strip() or len(command) > 64 * 1024:
        raise SubmissionRefused("command: empty or longer than 64 KiB")
    job: dict[str, Any] = {
        "script": f"#!/bin/sh\n{command}\n",
        "current_working_directory": "/tmp",
        "environment": ["PATH=/usr/local/bin:/usr/bin:/bin"],
        "tasks": 1,
    }
    for option in options:
        if option == "--hold":
            job["hold"] = True
            continue
        match = _SBATCH_OPTION.match(option)
        if match is None:
            raise SubmissionRefused(f"option {option[:40]!r}: not supported by the rest transport")
        name, value = match.groups()
        if name == "ntasks":
            job["tasks"] = int(value)
        elif name == "cpus-per-task":
            job["cpus_per_task"] = int(value)
        elif name == "mem":
            if not value.endswith("M") or not value[:-1].isdigit():
                raise SubmissionRefused(f"--mem={value[:20]}: expected MiB (NNNM)")
            job["memory_per_node"] = _uint(int(value[:-1]))
        elif name == "gres":
            job["tres_per_node"] = f"gres/{value}"
        elif name == "time":
            job["time_limit"] = _uint(int(value))
        elif name == "comment":
            job["comment"] = value
        elif name == "job-name":
            job["name"] = value
        elif name == "output":
            job["standard_output"] = value
        elif name == "partition":
            job["partition"] = value
        else:
            raise SubmissionRefused(f"option --{name[:30]}: not supported by the rest transport")
    return job
