"""Every ``bin/fairportal`` command docs/cli.md and README.md show, run as written against the
live demo server, and its output compared with the sample shown: the same lines, the same table
headers (so the same column set), the same labels, the same queues and workloads in the key
columns, the same JSON keys, and error lines word for word. The timings and figures in the
samples move with the clock; their shape may not.

A console block runs as alice unless ``<!-- as: USER -->`` is the line just above it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.cli.conftest import ROOT, Demo, as_user

pytestmark = pytest.mark.django_db

DOCS = ("docs/cli.md", "README.md")
HEADER = re.compile(r"^[A-Z][A-Z_]*( {2,}[A-Z][A-Z_]*)+$")
LABEL = re.compile(r"^([a-z][a-z ]*):(\s|$)")
KEY_COLUMNS = {"CLUSTERQUEUE", "LOCALQUEUE", "WORKLOAD", "BUDGET", "TARGET", "MODE", "KIND", "RESOURCE", "CLUSTER"}


@dataclass(frozen=True)
class Example:
    doc: str
    line: int
    user: str
    args: tuple[str, ...]
    shown: list[str]

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}:{self.user}:{' '.join(self.args)}"


def examples(doc: str) -> Iterator[Example]:
    lines = (ROOT / doc).read_text().splitlines()
    index = 0
    while index < len(lines):
        if lines[index].strip() != "```console":
            index += 1
            continue
        above = lines[index - 1].strip() if index else ""
        user = above[len("<!-- as: ") : -len(" -->")] if above.startswith("<!-- as: ") else "alice"
        end = lines.index("```", index + 1)
        block = lines[index + 1 : end]
        starts = [i for i, line in enumerate(block) if line.startswith("$ ")]
        for n, start in enumerate(starts):
            stop = starts[n + 1] if n + 1 < len(starts) else len(block)
            words = shlex.split(block[start][2:])
            assert words[0] == "bin/fairportal", f"{doc}:{index + start + 2}: only bin/fairportal runs here"
            yield Example(doc, index + start + 2, user, tuple(words[1:]), block[start + 1 : stop])
        index = end + 1


ALL = [example for doc in DOCS for example in examples(doc)]


def test_the_docs_show_every_verb():
    shown = {next(arg for arg in example.args if not arg.startswith("-")) for example in ALL}
    assert shown == {"shares", "why", "pending", "budgets", "simulate", "clusters"}
    assert any(example.doc == "README.md" and "shares" in example.args for example in ALL)
    assert any(example.doc == "README.md" and "why" in example.args for example in ALL)


def keys(value: Any) -> Any:
    """The key structure of a JSON value (a list by its first item)."""
    if isinstance(value, dict):
        return {key: keys(item) for key, item in value.items()}
    if isinstance(value, list):
        return [keys(value[0])] if value else []
    return None


def columns(header: str, line: str) -> dict[str, str]:
    starts = [match.start() for match in re.finditer(r"\S+", header)]
    names = header.split()
    return {name: line[start:end].strip() for name, start, end in zip(names, starts, [*starts[1:], None])}


def assert_same_shape(shown: list[str], live: list[str]) -> None:
    if shown and shown[0].lstrip().startswith(("{", "[")):
        assert keys(json.loads("\n".join(live))) == keys(json.loads("\n".join(shown)))
        return
    assert len(live) == len(shown), "\n".join(live)
    header: tuple[str, str] | None = None
    for doc_line, live_line in zip(shown, live):
        if doc_line.startswith("fairportal:"):
            assert live_line == doc_line
        elif HEADER.match(doc_line):
            assert live_line.split() == doc_line.split()
            header = (doc_line, live_line)
        elif LABEL.match(doc_line):
            assert LABEL.match(live_line) and LABEL.match(live_line).group(1) == LABEL.match(doc_line).group(1)
            header = None
        elif not doc_line.strip():
            assert not live_line.strip()
            header = None
        elif header is not None:
            doc_cells, live_cells = columns(header[0], doc_line), columns(header[1], live_line)
            for name in KEY_COLUMNS & doc_cells.keys():
                assert live_cells[name] == doc_cells[name], (name, live_line)
        else:
            assert live_line.split()[:2] == doc_line.split()[:2]


@pytest.fixture(scope="module")
def whatif_worker() -> Iterator[None]:
    """A real Celery worker on the whatif lane, for ``simulate`` (the test broker, as in tests/queues/test_tasks_e2e.py)."""
    from celery.contrib.testing.worker import start_worker

    from fairportal.celery import app
    from fairportal.schedule import WHATIF_QUEUE

    broker = os.environ.get("TEST_CELERY_BROKER_URL", "redis://127.0.0.1:6379/5")
    assert app.conf.broker_url == broker, "run through `make test` or set CELERY_BROKER_URL to TEST_CELERY_BROKER_URL"
    with app.connection_for_write() as connection:
        connection.default_channel.client.flushdb()  # no stale messages from earlier tests
    with start_worker(app, pool="solo", queues=[WHATIF_QUEUE], perform_ping_check=False, loglevel="WARNING"):
        yield


@pytest.mark.parametrize(
    "example",
    [pytest.param(e, id=e.id, marks=[pytest.mark.celery_worker] if "simulate" in e.args else []) for e in ALL],
)
def test_given_a_documented_command_then_it_runs_and_prints_what_the_doc_shows(
    demo_server: Demo, example: Example, request
):
    if "simulate" in example.args:
        request.getfixturevalue("whatif_worker")
    ran = as_user(demo_server, example.user, *example.args)

    failed = bool(example.shown) and example.shown[0].startswith("fairportal:")
    assert (ran.code != 0) == failed, ran.err
    live = (ran.err if failed else ran.out).rstrip("\n").splitlines()
    assert_same_shape(example.shown, live)


@pytest.mark.celery_worker
def test_given_simulate_json_then_the_finished_run_with_its_result(demo_server: Demo, whatif_worker):
    ran = as_user(demo_server, "alice", "simulate", "--json", "tests/scenarios/drf_classic.yaml")

    assert ran.code == 0, ran.err
    run = json.loads(ran.out)
    assert run["status"] == "succeeded" and run["error"] == ""
    per_queue = run["result"]["summary"]["perLocalQueue"]
    assert {key: stats["admitted"] for key, stats in per_queue.items()} == {"user-a/tasks": 3, "user-b/tasks": 2}
