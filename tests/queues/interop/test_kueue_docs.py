"""docs/kueue.md: every command it shows runs here as written (in a directory holding the
``cluster.yaml`` and ``examples.yaml`` it names: two of the test manifests)."""

from __future__ import annotations

import io
import re
import shlex
import shutil
import sys
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from queues.models import ClusterQueue
from tests.queues.interop.conftest import MANIFESTS

pytestmark = pytest.mark.django_db

DOC = Path(__file__).resolve().parents[3] / "docs" / "kueue.md"


def commands() -> list[str]:
    (block,) = re.findall(r"```sh\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    return [line.split("  #", 1)[0].strip() for line in block.strip().splitlines()]


def test_every_command_of_the_doc_runs_as_written(tmp_path, monkeypatch):
    shutil.copy(MANIFESTS / "cluster-v1beta2.yaml", tmp_path / "cluster.yaml")
    shutil.copy(MANIFESTS / "kueue-examples-mixed.yaml", tmp_path / "examples.yaml")
    monkeypatch.chdir(tmp_path)
    shown = commands()
    assert len(shown) == 6 and all(line.startswith("python manage.py kueue_") for line in shown)

    for line in shown:
        words = shlex.split(line)[2:]
        if "<" in words:  # the shell's redirection: the file becomes standard input
            at = words.index("<")
            monkeypatch.setattr(sys, "stdin", io.StringIO(Path(words[at + 1]).read_text(encoding="utf-8")))
            words = words[:at]
        out, err = StringIO(), StringIO()
        try:
            call_command(*words, stdout=out, stderr=err)
        except SystemExit as exit_info:  # a non-zero exit: the doc shows a command that fails
            pytest.fail(f"{line}: exit status {exit_info.code}: {err.getvalue()}")

    assert ClusterQueue.objects.filter(name="gpu-training").exists()
    exported = list(yaml.safe_load_all((tmp_path / "cluster.yaml").read_text(encoding="utf-8")))
    assert {doc["apiVersion"] for doc in exported} == {"kueue.x-k8s.io/v1beta1"}
