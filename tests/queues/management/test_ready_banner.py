"""The `make run` banner: printed once the web server's /readyz answers 200."""

from __future__ import annotations

import io
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from django.core.management import call_command


class _Ready(BaseHTTPRequestHandler):
    status = 200
    body: dict = {"status": "ready", "down": []}

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path != "/readyz":
            self.send_response(404)
            self.end_headers()
            return
        payload = json.dumps(self.body).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        pass


@pytest.mark.parametrize(
    ("debug", "logins"),
    [(True, "admin/admin (platform admin), alice/alice"), (False, "passwords in var/demo-logins.log")],
)
def test_given_readyz_answers_200_then_the_banner_prints_the_url_and_the_demo_logins(settings, debug, logins):
    settings.DEBUG = debug
    # A real HTTP server on a free loopback port stands in for gunicorn's /readyz (the real
    # /readyz is tested in tests/core/test_health.py and through the container).
    server = HTTPServer(("127.0.0.1", 0), _Ready)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    out = io.StringIO()
    try:
        call_command("ready_banner", port=server.server_port, timeout=10, exit=True, stdout=out)
    finally:
        server.shutdown()

    text = out.getvalue()
    assert f"fairportal is up: http://127.0.0.1:{server.server_port}/" in text
    assert logins in text


def test_given_nothing_answers_then_the_banner_says_what_it_still_waits_for():
    out = io.StringIO()

    call_command("ready_banner", port=1, timeout=0.1, exit=True, stdout=out)

    assert "not ready yet, waiting for: web server" in out.getvalue()


def test_given_readyz_names_what_is_down_then_the_banner_names_it():
    class _NotReady(_Ready):
        status = 503
        body = {"status": "not ready", "down": ["control_worker"]}

    server = HTTPServer(("127.0.0.1", 0), _NotReady)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    out = io.StringIO()
    try:
        call_command("ready_banner", port=server.server_port, timeout=0.5, exit=True, stdout=out)
    finally:
        server.shutdown()

    assert "not ready yet, waiting for: control_worker" in out.getvalue()
