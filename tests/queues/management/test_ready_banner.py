"""The `make run` banner: printed once the web server answers and a worker replies."""

from __future__ import annotations

import io
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from django.core.management import call_command

from queues.management.commands import ready_banner


class _Login(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


@pytest.mark.parametrize(
    ("debug", "logins"),
    [(True, "admin/admin (platform admin), alice/alice"), (False, "passwords in var/demo-logins.log")],
)
def test_given_web_and_worker_up_then_the_banner_prints_the_url_and_the_demo_logins(
    monkeypatch, settings, debug, logins
):
    settings.DEBUG = debug
    # A real HTTP server on a free loopback port stands in for `runserver`; the Celery ping is
    # replaced (a worker is started by tests/queues/test_tasks_e2e.py, not here).
    server = HTTPServer(("127.0.0.1", 0), _Login)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(ready_banner, "_worker_replies", lambda: True)
    out = io.StringIO()
    try:
        call_command("ready_banner", port=server.server_port, timeout=10, exit=True, stdout=out)
    finally:
        server.shutdown()

    text = out.getvalue()
    assert f"fairportal is up: http://127.0.0.1:{server.server_port}/" in text
    assert logins in text


def test_given_nothing_answers_then_the_banner_says_what_it_still_waits_for(monkeypatch):
    monkeypatch.setattr(ready_banner, "_answers", lambda url: False)
    monkeypatch.setattr(ready_banner, "_worker_replies", lambda: True)
    out = io.StringIO()

    call_command("ready_banner", port=1, timeout=0.1, exit=True, stdout=out)

    assert "still waiting for the web server" in out.getvalue()
