"""Every Celery send in the application goes through ``core.enqueue``: no other module calls
``.delay``/``.apply_async``/``send_task`` (tests and benchmarks drive workers directly)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("fairshare", "fairportal", "core", "queues", "budgets", "playground")
DIRECT_SEND = re.compile(r"\.(delay|apply_async|send_task)\(")


def test_given_the_application_packages_then_only_the_enqueue_module_sends_tasks():
    senders = sorted(
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if DIRECT_SEND.search(path.read_text(encoding="utf-8"))
    )

    assert senders == ["core/enqueue.py"]
