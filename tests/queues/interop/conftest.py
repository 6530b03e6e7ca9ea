"""Helpers for the interop tests: the manifest files written for them."""

from __future__ import annotations

from pathlib import Path

import pytest

MANIFESTS = Path(__file__).parent / "manifests"


def manifest(name: str) -> str:
    return (MANIFESTS / name).read_text(encoding="utf-8")


@pytest.fixture
def cluster_v1beta2() -> str:
    return manifest("cluster-v1beta2.yaml")
