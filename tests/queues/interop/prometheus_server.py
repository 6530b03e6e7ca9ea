"""Start Debian's real Prometheus binary for a test: temporary config and storage, a free
loopback port, stopped afterwards. Never a system service."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

STARTUP_SECONDS = 30


def binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: `make test` installs Debian's prometheus package (make prometheus)")
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback test server
        return json.load(response)


def backfill(openmetrics: str, storage: Path) -> None:
    """Write historical samples into ``storage`` as TSDB blocks (``promtool tsdb create-blocks-from``)."""
    source = storage.parent / "history.om"
    source.write_text(openmetrics)
    subprocess.run(
        [binary("promtool"), "tsdb", "create-blocks-from", "openmetrics", str(source), str(storage)],
        check=True,
        capture_output=True,
        timeout=120,
    )


@contextmanager
def prometheus(
    workdir: Path,
    scrape_configs: list[dict[str, Any]] | None = None,
    storage: Path | None = None,
    rule_files: list[Path] | None = None,
) -> Iterator[str]:
    """A running Prometheus (evaluating ``rule_files`` every second, when given); yields its
    base URL. Retries on a port taken in the meantime."""
    storage = storage or workdir / "tsdb"
    storage.mkdir(parents=True, exist_ok=True)
    config = workdir / "prometheus.yml"
    config.write_text(
        yaml.safe_dump(
            {
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "scrape_configs": scrape_configs or [],
                "rule_files": [str(path) for path in rule_files or []],
            }
        )
    )
    log = workdir / "prometheus.log"
    for _attempt in range(3):
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        with log.open("w") as log_file:
            process = subprocess.Popen(
                [
                    binary("prometheus"),
                    f"--config.file={config}",
                    f"--storage.tsdb.path={storage}",
                    "--storage.tsdb.retention.time=3650d",
                    f"--web.listen-address=127.0.0.1:{port}",
                    "--web.enable-lifecycle",
                ],
                stdout=log_file,
                stderr=subprocess.STDOUT,
            )
        try:
            if _wait_ready(url, process):
                yield url
                return
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    pytest.fail(f"Prometheus did not start; last log:\n{log.read_text()[-2000:]}")


def _wait_ready(url: str, process: subprocess.Popen) -> bool:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as response:  # noqa: S310
                if response.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    return False


def wait_for(url: str, promql: str, timeout: float = 30.0) -> list[dict[str, Any]]:
    """Poll an instant query until it returns at least one series (scrapes take a moment)."""
    deadline = time.monotonic() + timeout
    query = urllib.parse.urlencode({"query": promql})
    while True:
        result = get_json(f"{url}/api/v1/query?{query}")["data"]["result"]
        if result or time.monotonic() > deadline:
            return result
        time.sleep(0.5)
