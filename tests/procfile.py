"""The Procfile's processes, as the tests and benchmarks that start them read it."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def procfile_command(process: str) -> list[str]:
    """The command line of ``process`` in the Procfile (run it from the repository root)."""
    for line in (ROOT / "Procfile").read_text().splitlines():
        name, _, command = line.partition(":")
        if name.strip() == process:
            return shlex.split(command.strip())
    raise AssertionError(f"the Procfile has no {process!r} process")


def wait_for(condition: Callable[[], bool], timeout: float, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return condition()
