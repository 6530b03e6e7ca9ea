"""Request ids in every log line, web and tasks alike, and the JSON log format (``LOG_FORMAT``).

``core.request_id.RequestIdMiddleware`` binds a request's id (``X-Request-ID``) for the time of
the request; a task published meanwhile carries it in a message header (``before_task_publish``)
and the worker binds it again while the task runs (``task_prerun``/``task_postrun``), so the
task's log lines, and the tasks it sends in turn, show the same id. ``RequestIdFilter`` copies
the bound id onto each record (``-`` when there is none) and ``JsonFormatter`` writes one JSON
object a line.

The signal handlers are connected when this module is imported, which Django's logging
configuration does in every process (web, workers, beat, management commands): the
``request_id`` filter of ``settings.LOGGING`` names it.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from celery import current_task
from celery.signals import before_task_publish, task_postrun, task_prerun

HEADER = "X-Request-ID"
TASK_HEADER = "request_id"  # the Celery message header that carries it
# An incoming id is kept when it is short and made of safe characters (it ends up in logs and
# response headers); anything else is replaced by a fresh one.
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")

_request_id: ContextVar[str | None] = ContextVar("fairportal_request_id", default=None)


def new_request_id() -> str:
    return uuid.uuid4().hex


def accept_request_id(incoming: str | None) -> str:
    """The caller's id when it is short and safe, else a new one."""
    if incoming and _SAFE_ID.fullmatch(incoming):
        return incoming
    return new_request_id()


def current_request_id() -> str | None:
    return _request_id.get()


def bind_request_id(value: str | None) -> Any:
    """Bind ``value`` for the current context; returns the token ``unbind_request_id`` takes."""
    return _request_id.set(value)


def unbind_request_id(token: Any) -> None:
    _request_id.reset(token)


class RequestIdFilter(logging.Filter):
    """Puts ``request_id`` (and, inside a task, ``task_id`` and ``task_name``) on every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = _request_id.get() or "-"
        task = current_task
        if task and not hasattr(record, "task_id"):
            try:
                record.task_id = task.request.id
                record.task_name = task.name
            except Exception:  # noqa: BLE001 - outside a worker there is no request to read
                pass
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, request_id, and
    the task, exception and extra fields when there are any."""

    _STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "request_id", "task_id", "task_name"}

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or _request_id.get() or "-",
        }
        for name in ("task_id", "task_name"):
            if getattr(record, name, None):
                entry[name] = getattr(record, name)
        for name, value in vars(record).items():
            if name not in self._STANDARD and not name.startswith("_"):
                entry[name] = value if isinstance(value, str | int | float | bool | type(None)) else repr(value)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False)


@before_task_publish.connect(dispatch_uid="fairportal.request_id.publish")
def _carry_request_id(headers: dict[str, Any] | None = None, **_: Any) -> None:
    value = _request_id.get()
    if value and headers is not None:
        headers.setdefault(TASK_HEADER, value)


def _eager(task: Any) -> bool:
    """A task run in the caller's thread (``apply()``, eager mode) keeps the caller's id as it is."""
    return task is None or bool(getattr(task.request, "is_eager", False))


@task_prerun.connect(dispatch_uid="fairportal.request_id.prerun")
def _bind_task_request_id(task: Any = None, **_: Any) -> None:
    if _eager(task):
        return
    value = getattr(task.request, TASK_HEADER, None)
    _request_id.set(value if isinstance(value, str) and _SAFE_ID.fullmatch(value) else None)


@task_postrun.connect(dispatch_uid="fairportal.request_id.postrun")
def _unbind_task_request_id(task: Any = None, **_: Any) -> None:
    if not _eager(task):
        _request_id.set(None)
