"""Request ids in the logs: the middleware, the JSON formatter, and a task sent by a request
logging the same id on a real Celery worker (in-process, real Redis broker; no eager mode)."""

from __future__ import annotations

import io
import json
import logging
import os
import time
from collections.abc import Iterator

import pytest
from celery.contrib.testing.worker import start_worker

from core.log_context import JsonFormatter, RequestIdFilter, accept_request_id
from fairportal.celery import app
from fairportal.schedule import CONTROL_QUEUE
from tests.core import request_id_urls  # registers the task before the worker starts

BROKER = os.environ.get("TEST_CELERY_BROKER_URL", "redis://127.0.0.1:6379/5")


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    """The settings' console handler as LOG_FORMAT=json builds it, writing to a buffer."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield stream
    root.removeHandler(handler)
    root.setLevel(level)


def lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_given_an_incoming_id_then_it_is_kept_when_short_and_safe_else_replaced():
    assert accept_request_id("abc-123_x.y:z") == "abc-123_x.y:z"
    for bad in ["", None, "a" * 65, "bad id", "x\nforged: line", "<script>", "ü"]:
        replaced = accept_request_id(bad)
        assert replaced != bad and len(replaced) == 32


@pytest.mark.django_db
def test_given_a_request_then_its_log_lines_are_json_with_the_request_id(client, settings, json_log):
    settings.REQUEST_LOG = True

    response = client.get("/healthz", HTTP_X_REQUEST_ID="req-0001")
    fresh = client.get("/healthz", HTTP_X_REQUEST_ID="no spaces allowed")

    assert response["X-Request-ID"] == "req-0001"
    assert fresh["X-Request-ID"] != "no spaces allowed"
    access = [entry for entry in lines(json_log) if entry["logger"] == "fairportal.request"]
    assert access[0]["request_id"] == "req-0001"
    assert access[0] | {"time": None} == {
        "time": None,
        "level": "INFO",
        "logger": "fairportal.request",
        "message": "GET /healthz 200",
        "request_id": "req-0001",
        "method": "GET",
        "path": "/healthz",
        "status": 200,
        "duration_ms": access[0]["duration_ms"],
    }
    assert access[1]["request_id"] == fresh["X-Request-ID"]


@pytest.fixture
def control_worker() -> Iterator[None]:
    assert app.conf.broker_url == BROKER, "run through `make test` or set CELERY_BROKER_URL to TEST_CELERY_BROKER_URL"
    with app.connection_for_write() as connection:
        connection.default_channel.client.flushdb()
    with start_worker(
        app, pool="solo", queues=[CONTROL_QUEUE], perform_ping_check=False, loglevel="WARNING", shutdown_timeout=10
    ):
        yield


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_given_a_request_sends_a_task_then_the_worker_logs_it_with_the_same_request_id(
    client, settings, control_worker, json_log
):
    # json_log after the worker: starting it reconfigures logging (Django's LOGGING) once more.
    settings.ROOT_URLCONF = request_id_urls.__name__

    response = client.get("/log-and-send/", HTTP_X_REQUEST_ID="trace-42")

    assert response.status_code == 200
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not any(e["message"] == "task says hello" for e in lines(json_log)):
        time.sleep(0.1)
    entries = {entry["message"]: entry for entry in lines(json_log)}
    assert entries["view says hello"]["request_id"] == "trace-42"
    task_entry = entries["task says hello"]  # logged in the worker's thread, from the message header
    assert task_entry["request_id"] == "trace-42"
    assert task_entry["task_name"] == "tests.log_request_id"
    assert task_entry["task_id"]


def test_given_a_task_run_eagerly_inside_a_request_then_the_request_keeps_its_id(json_log):
    """apply() runs the task in the caller's thread: its lines show the caller's id, and the id is
    still bound afterwards (the signal pair only rebinds on a worker)."""
    from core.log_context import bind_request_id, current_request_id, unbind_request_id

    token = bind_request_id("eager-1")
    try:
        request_id_urls.log_request_id.apply(args=["eagerly"])
        assert current_request_id() == "eager-1"
    finally:
        unbind_request_id(token)
    entry = next(e for e in lines(json_log) if e["message"] == "task says eagerly")
    assert entry["request_id"] == "eager-1"
