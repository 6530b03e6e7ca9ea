"""Helpers of the container test: podman with this host's settings, the image, free ports."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTAINERS_CONF = ROOT / "deploy" / "container" / "containers.conf"
IMAGE = "localhost/fairportal:test"


def podman_env() -> dict[str, str]:
    return {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)}


def podman(
    *args: str, check: bool = True, timeout: float = 120, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        ["podman", *args], capture_output=True, text=True, env=podman_env(), timeout=timeout, input=input, check=False
    )
    if check and result.returncode != 0:
        raise AssertionError(f"podman {' '.join(args[:3])} ... failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return result


def require_podman() -> None:
    missing = [tool for tool in ("podman", "runc", "debootstrap") if shutil.which(tool) is None]
    assert not missing, f"{', '.join(missing)} missing: `make test` installs them (make podman)"


def build_image() -> float:
    """Build (or reuse the cached layers of) the image; returns the seconds it took."""
    import time

    started = time.monotonic()
    result = subprocess.run(
        [str(ROOT / "deploy" / "container" / "build-image.sh")],
        capture_output=True,
        text=True,
        env={**podman_env(), "IMAGE": IMAGE},
        timeout=1500,
        check=False,
    )
    assert result.returncode == 0, f"image build failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return time.monotonic() - started


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
