"""``bin/fairportal`` without a fairportal behind it: usage errors, an unreachable server, a
server that never answers, and a hostile one. Each failure is one line on stderr with a
non-zero exit (2 for usage errors), never a traceback, and never echoes unbounded input."""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from tests.cli.conftest import ROOT, Ran, fairportal


def one_error_line(ran: Ran, code: int) -> str:
    assert ran.code == code, (ran.code, ran.err)
    assert ran.out == ""
    assert "Traceback" not in ran.err
    lines = ran.err.splitlines()
    assert len(lines) == 1, ran.err
    assert lines[0].startswith("fairportal: ")
    return lines[0]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens once it is closed


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ((), "required: VERB"),
        (("sshare",), "invalid choice: 'sshare'"),
        (("why",), "required: WORKLOAD"),
        (("why", "Team-A/Job!"), "WORKLOAD must be an id or namespace/name"),
        (("pending", "--queue", "team-a"), "argument --queue: must be namespace/name"),
        (("shares", "--limit", "0"), "must be a whole number from 1 to 100000"),
        (("shares", "--limit", "many"), "must be a whole number from 1 to 100000"),
        (("--timeout", "-1", "shares"), "seconds above 0"),
        (("shares", "--namespace", "x" * 5000), "must be a name"),
    ],
)
def test_given_bad_arguments_then_one_line_names_the_problem_and_exit_2(args, says):
    line = one_error_line(fairportal(*args, server="http://127.0.0.1:9", token="key"), 2)
    assert says in line
    assert len(line) < 400  # a 5,000-character argument is not echoed back


@pytest.mark.parametrize(
    ("server", "token", "says"),
    [
        (None, "key", "no server: set FAIRPORTAL"),
        ("http://127.0.0.1:9", None, "no token: set FAIRPORTAL_TOKEN"),
        ("ftp://example.org", "key", "must start with http:// or https://"),
        ("http://user:secret@127.0.0.1:9", "key", "must not carry credentials"),
        ("http://127.0.0.1:9", "two words", "the token is not a key"),
    ],
)
def test_given_no_usable_server_or_token_then_exit_2(server, token, says):
    line = one_error_line(fairportal("shares", server=server, token=token), 2)
    assert says in line
    assert "secret" not in line


def test_given_nothing_listens_then_cannot_reach_and_exit_1():
    url = f"http://127.0.0.1:{closed_port()}"
    line = one_error_line(fairportal("shares", server=url, token="key"), 1)
    assert line == f"fairportal: cannot reach {url}/ (is the server running? check FAIRPORTAL or --server)"


@pytest.fixture
def silent_server() -> Iterator[str]:
    """Accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    listener.close()


def test_given_a_server_that_never_answers_then_the_timeout_ends_it(silent_server):
    line = one_error_line(fairportal("--timeout", "1", "shares", server=silent_server, token="key"), 1)
    assert line == f"fairportal: {silent_server}/ did not answer within 1 s (--timeout to wait longer)"


HUGE_ERROR = (500, '{"detail": "' + "\\u001b[31mEVIL\\nline " * 20000 + '"}')


class _Hostile(http.server.BaseHTTPRequestHandler):
    """Answers every request with ``answer`` (status, body): by default a huge error full of
    terminal escapes and newlines."""

    answer = HUGE_ERROR

    def do_GET(self) -> None:  # noqa: N802  # the standard library's name
        status, text = self.answer
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hostile_server(request) -> Iterator[str]:
    handler = type("Handler", (_Hostile,), {"answer": getattr(request, "param", HUGE_ERROR)})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_given_a_hostile_error_body_then_one_short_line_without_escapes(hostile_server):
    line = one_error_line(fairportal("shares", server=hostile_server, token="key"), 1)
    assert line.startswith("fairportal: the server answered 500: ")
    assert "EVIL line" in line and line.endswith("…")
    assert "\x1b" not in line
    assert len(line) <= 320


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "cannot read"),
        ("name: [unclosed", "not valid YAML at line"),
        ("{not json", "not valid JSON"),
        ("- a list", "a scenario is a mapping"),
    ],
)
def test_given_a_scenario_file_that_cannot_be_used_then_exit_2_before_sending(tmp_path, content, says):
    scenario = tmp_path / "scenario.yaml"
    if content is not None:
        scenario.write_text(content)
    # nothing listens on the server: the file is refused before any request
    line = one_error_line(
        fairportal("simulate", str(scenario), server=f"http://127.0.0.1:{closed_port()}", token="k"), 2
    )
    assert says in line


def test_given_a_scenario_over_the_size_limit_then_exit_2(tmp_path):
    scenario = tmp_path / "huge.json"
    scenario.write_text("{" + " " * (1024 * 1024) + "}")
    line = one_error_line(fairportal("simulate", str(scenario), server="http://127.0.0.1:9", token="k"), 2)
    assert "is larger than the 1024 KiB the server accepts" in line


@pytest.mark.parametrize(
    ("hostile_server", "says"),
    [
        (
            (200, '{"count": 1, "next": null, "results": [{"namespace_weight": "heavy"}]}'),
            "not what this client expects",
        ),
        ((200, '{"count": 1, "next": null, "results": "nope"}'), "is not a list page"),
        ((200, "<html>a login page</html>"), "answered 200 without JSON: is it a fairportal server?"),
        ((302, "{}"), "answered a redirect (302)"),
    ],
    indirect=["hostile_server"],
)
def test_given_a_server_that_is_not_fairportal_then_one_line_and_exit_1(hostile_server, says):
    line = one_error_line(fairportal("shares", server=hostile_server, token="key"), 1)
    assert says in line


def test_given_no_requests_package_then_one_line_says_what_to_install():
    blocked = (
        "import runpy, sys; sys.modules['requests'] = None; runpy.run_module('fairportal_cli', run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-c", blocked, "shares"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "")},
        timeout=60,
        check=False,
    )

    assert done.returncode == 2 and done.stdout == ""
    assert (
        done.stderr
        == "fairportal: the Python package requests is missing: pip install requests (or run make install)\n"
    )
