"""Print the `make run` banner once ``/readyz`` says the site is ready.

Honcho interleaves the start-up logs of web, worker and beat, so the URL and the demo logins
printed before them scroll away; this process polls the web server's ``/readyz`` (database,
broker, the control worker's heartbeat, the cluster backend) until it answers 200, prints them
again, and then stays (honcho stops every process when one exits). The Procfile passes the web
server's port as ``--port $WEB_PORT``: honcho gives each process its own ``PORT`` (web's plus
100 per process), so this process's ``PORT`` is not the web server's.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Wait for the web server and a Celery worker, then print the URL and the demo logins."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--timeout", type=float, default=180.0, help="seconds to wait before printing anyway")
        parser.add_argument("--exit", action="store_true", help="return after printing (tests)")

    def handle(self, *args: Any, port: int, timeout: float, exit: bool, **options: Any) -> None:
        url = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + timeout
        waiting = ["web server"]
        while time.monotonic() < deadline:
            waiting = _not_ready(url + "readyz")
            if not waiting:
                break
            time.sleep(1)
        lines = [
            "",
            "  ------------------------------------------------------------------------------",
            f"  fairportal is up: {url}"
            if not waiting
            else f"  fairportal: not ready yet, waiting for: {', '.join(waiting)} ({url}readyz)",
            f"  Admin: {url}admin/   API docs: {url}api/docs/",
            f"  Demo logins: {_logins()}",
            "  ------------------------------------------------------------------------------",
            "",
        ]
        self.stdout.write("\n".join(lines))
        self.stdout.flush()
        while not exit:
            time.sleep(3600)


def _logins() -> str:
    """The demo's passwords are the user names only on a DEBUG machine (``queues.demo.demo_password``)."""
    if settings.DEBUG:
        return "admin/admin (platform admin), alice/alice and bob/bob (tenants)"
    return "admin (platform admin), alice and bob (tenants); passwords in var/demo-logins.log"


def _not_ready(url: str) -> list[str]:
    """What ``/readyz`` names as down (empty: ready); the web server itself while it does not answer."""
    headers = {"Authorization": f"Bearer {settings.READYZ_TOKEN}"} if settings.READYZ_TOKEN else {}
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 - our own loopback URL
            return [] if response.status == 200 else ["web server"]
    except urllib.error.HTTPError as error:
        try:
            down = json.load(error).get("down") or []
        except (ValueError, AttributeError):
            down = []
        return [str(name) for name in down] or [f"web server (HTTP {error.code})"]
    except (urllib.error.URLError, OSError):
        return ["web server"]
