"""Print the `make run` banner once the web server answers and a Celery worker replies.

Honcho interleaves the start-up logs of web, worker and beat, so the URL and the demo logins
printed before them scroll away; this process waits for all of it to be up, prints them again,
and then stays (honcho stops every process when one exits).
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from typing import Any

from celery import current_app as app
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
        web = worker = False
        while time.monotonic() < deadline and not (web and worker):
            web = web or _answers(url + "accounts/login/")
            worker = worker or _worker_replies()
            if not (web and worker):
                time.sleep(1)
        waiting = [name for name, up in (("web server", web), ("Celery worker", worker)) if not up]
        lines = [
            "",
            "  ------------------------------------------------------------------------------",
            f"  fairportal is up: {url}" if not waiting else f"  fairportal: still waiting for the {' and '.join(waiting)}",
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


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - our own loopback URL
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _worker_replies() -> bool:
    try:
        return bool(app.control.ping(timeout=1.0))
    except Exception:  # the broker may not be up yet either
        return False
