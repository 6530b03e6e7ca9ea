"""A bad cluster-backend setting stops start-up with one line naming the variable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def start_with(**environ: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": "sqlite:///:memory:", **environ}
    code = "import django; django.setup(); from django.conf import settings; print(settings.SLURM_FLAVOR_PARTITIONS)"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"CLUSTER_BACKEND": "kubernetes"}, "CLUSTER_BACKEND='kubernetes': must be one of simulated, external, slurm"),
        ({"SLURM_FLAVOR_PARTITIONS": "a100"}, "SLURM_FLAVOR_PARTITIONS: expected key=value pairs"),
        ({"CLUSTER_BACKOFF": "0s"}, "CLUSTER_BACKOFF: must be greater than 0s"),
    ],
)
def test_given_bad_backend_setting_then_start_up_fails_naming_it(environ, named):
    result = start_with(**environ)

    assert result.returncode != 0
    assert named in result.stderr


def test_given_flavor_partitions_then_they_are_read_as_a_mapping():
    result = start_with(SLURM_FLAVOR_PARTITIONS="a100=gpu, default=main")

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "{'a100': 'gpu', 'default': 'main'}"
