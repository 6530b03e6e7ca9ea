"""The usage examples of ``fairshare/README.md`` run as written (from the repository root)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "fairshare" / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_the_readme_has_usage_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("block", BLOCKS, ids=[f"example-{n}" for n in range(1, len(BLOCKS) + 1)])
def test_given_a_readme_example_when_run_then_its_assertions_hold(block, monkeypatch):
    monkeypatch.chdir(REPO)
    exec(compile(block, str(README), "exec"), {"__name__": "readme_example"})
