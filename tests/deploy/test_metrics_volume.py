"""compose.yaml's `metrics` volume, as podman mounts it (real podman; the base image, no build
of the app image): the containers of the stack share it while any of them runs, the image's user
(10001) can write it, and it is empty again once all have stopped."""

from __future__ import annotations

import secrets

import pytest
import yaml

from tests.deploy.container import ROOT, build_image, podman, require_podman

pytestmark = pytest.mark.container

BASE = "localhost/fairportal-base:bookworm"


def test_given_the_compose_metrics_volume_then_containers_share_it_and_it_is_empty_after_all_stop():
    require_podman()
    if podman("image", "exists", BASE, check=False).returncode != 0:
        build_image()  # makes the base image when missing
    options = yaml.safe_load((ROOT / "compose.yaml").read_text())["volumes"]["metrics"]["driver_opts"]
    volume = f"fp-metrics-test-{secrets.token_hex(4)}"
    holder = f"{volume}-holder"
    podman("volume", "create", *(arg for key, value in options.items() for arg in ("--opt", f"{key}={value}")), volume)
    run = ["run", "--rm", "--network", "host", "--user", "10001", "-v", f"{volume}:/run/fairportal-metrics", BASE]
    try:
        podman(*run[:1], "-d", "--name", holder, *run[1:], "sleep", "120")
        podman(*run, "sh", "-c", "touch /run/fairportal-metrics/counter_web-7.db")
        while_running = podman(*run, "ls", "/run/fairportal-metrics").stdout.split()
        podman("stop", "--time", "0", holder)
        podman("rm", "--force", "--ignore", holder)
        after_all_stopped = podman(*run, "ls", "-A", "/run/fairportal-metrics").stdout.split()
    finally:
        podman("rm", "--force", "--ignore", holder, check=False)
        podman("volume", "rm", "--force", volume, check=False)

    assert while_running == ["counter_web-7.db"]  # another container's file, while one holds it
    assert after_all_stopped == []
