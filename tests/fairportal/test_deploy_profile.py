"""The profiles a server runs in: ``make run`` (DEBUG off, gunicorn on loopback, WhiteNoise,
branded error pages) and a DEBUG=false deployment (strong SECRET_KEY, ``check --deploy`` clean).
Each starts the real programs as processes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.db import connection

from fairportal.secret_key import DEVELOPMENT_KEY, SecretKeyError, read_secret_key
from tests.procfile import ROOT, procfile_command

STRONG_KEY = "4f9c2b7e1d8a6f3c0b5e9d2a7c4f1e8b3d6a9c0f5e2b7d4a1c8f3e6b9d0a5c2f7e"
PROFILE_VARIABLES = (
    "DEBUG",
    "SECRET_KEY",
    "SECRET_KEY_FILE",
    "HTTPS",
    "BIND_ADDRESS",
    "METRICS_TOKEN",
    "PORT",
    "DJANGO_ALLOW_ASYNC_UNSAFE",
)  # the browser tests set the last one for themselves


def clean_environment(**overrides: str) -> dict[str, str]:
    """This process's environment without the profile's variables (make test sets DEBUG=true)."""
    env = {key: value for key, value in os.environ.items() if key not in PROFILE_VARIABLES}
    env["DJANGO_SETTINGS_MODULE"] = "fairportal.settings"
    return {**env, **overrides}


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
    )


def test_given_the_deployment_settings_then_check_deploy_reports_no_warnings():
    env = clean_environment(DEBUG="false", HTTPS="true", SECRET_KEY=STRONG_KEY, ALLOWED_HOSTS="fairportal.example")

    result = manage("check", "--deploy", "--fail-level", "WARNING", env=env)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("", "must be set when DEBUG is false"),
        ("dev-only-insecure-key-change-me", "published example or development key"),
        ("django-insecure-" + "x1y2z3" * 10, "published example or development key"),
        ("changeme", "published example or development key"),
        ("s3cr3t-but-short", "use at least 50"),
        ("ab" * 40, "fewer than 5 different characters"),
    ],
    ids=["missing", "project-dev-key", "django-insecure", "placeholder", "short", "repetitive"],
)
def test_given_debug_off_and_a_weak_key_then_it_is_refused_naming_the_problem(key, problem):
    with pytest.raises(SecretKeyError) as refused:
        read_secret_key({"SECRET_KEY": key}, debug=False)
    assert str(refused.value).startswith("SECRET_KEY") and problem in str(refused.value)


def test_given_a_strong_key_or_debug_then_it_is_used():
    assert read_secret_key({"SECRET_KEY": STRONG_KEY}, debug=False) == STRONG_KEY
    assert read_secret_key({}, debug=True) == DEVELOPMENT_KEY


def test_given_debug_off_and_a_weak_key_then_manage_py_stops_with_one_line():
    result = manage("check", env=clean_environment(DEBUG="false", SECRET_KEY="dev-only-insecure-key-change-me"))

    assert result.returncode != 0
    assert result.stderr.strip().count("\n") == 0, result.stderr  # one line, no traceback
    assert result.stderr.startswith("error: SECRET_KEY: the key is a published example or development key")


def test_given_a_weak_key_then_gunicorn_refuses_to_start_with_one_line():
    env = clean_environment(DEBUG="false", SECRET_KEY="changeme", PORT=str(free_port()))
    command = [str(ROOT / ".venv/bin/gunicorn"), "--config", "fairportal/gunicorn.conf.py"]

    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)

    assert result.returncode != 0
    assert "error: SECRET_KEY: the key is a published example or development key" in result.stderr
    assert "Traceback" not in result.stderr


# --- `make run`: the Procfile's web process with the defaults -----------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a listening TCP socket on ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, port_hex = local.split(":")
            if state == "0A" and int(port_hex, 16) == port:
                found.add(address)
    return found


def fetch(url: str, *, data: bytes | None = None, headers: dict[str, str] | None = None):
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.fixture
def make_run_web(tmp_path):
    """gunicorn as ``make run`` starts it: no DEBUG, a generated key file, collected static files."""
    key_file = tmp_path / "secret_key"
    key_file.write_text(STRONG_KEY)
    db = connection.settings_dict
    port = free_port()
    env = clean_environment(
        SECRET_KEY_FILE=str(key_file),
        FAIRPORTAL_VAR_DIR=str(tmp_path),
        PORT=str(port),
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
    )
    collected = manage("collectstatic", "--noinput", "-v", "0", env=env)
    assert collected.returncode == 0, collected.stderr
    server = subprocess.Popen(
        procfile_command("web"),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{base}/accounts/login/", timeout=2)
            break
        except OSError:
            time.sleep(0.3)
    try:
        yield base, port, tmp_path
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.django_db(transaction=True)
def test_make_run_serves_on_loopback_only_with_branded_errors_and_compressed_static_files(make_run_web):
    base, port, var_dir = make_run_web

    assert listening_addresses(port) == {"0100007F"}  # 127.0.0.1, nothing else

    _, headers, _ = fetch(f"{base}/accounts/login/")
    csrf_cookie = headers["Set-Cookie"].split(";")[0]  # csrftoken=...: the POST gets as far as its body
    status, headers, body = fetch(
        f"{base}/accounts/login/",
        data=b"username=x&password=" + b"y" * 3_000_000,
        headers={"Content-Type": "application/x-www-form-urlencoded", "Cookie": csrf_cookie},
    )
    page = body.decode()
    assert status == 400 and "fairportal" in page and "Bad request" in page
    for leak in ("Traceback", "DATABASE", "CELERY_BROKER", "SECRET_KEY", "settings", "URLconf"):
        assert leak not in page
    status, _, body = fetch(f"{base}/accounts/login/", data=b"username=x&password=y")  # no CSRF cookie
    assert status == 403 and "The form expired" in body.decode() and "CSRF_COOKIE" not in body.decode()

    status, _, body = fetch(f"{base}/no-such-page/")
    page = body.decode()
    assert status == 404 and "Page not found" in page and "URLconf" not in page and "accounts/login" not in page

    manifest = json.loads((var_dir / "staticfiles" / "staticfiles.json").read_text())["paths"]
    plotly = manifest["js/plotly.min.js"]
    assert plotly != "js/plotly.min.js"  # a content hash in the name: cached for a year, busted on change
    status, headers, body = fetch(f"{base}/static/{plotly}", headers={"Accept-Encoding": "br, gzip"})
    assert status == 200 and headers["Content-Encoding"] in {"br", "gzip"}
    assert len(body) < 2_000_000 < (ROOT / "static/js/plotly.min.js").stat().st_size
    assert "max-age=315360000" in headers["Cache-Control"]
    login_page = fetch(f"{base}/accounts/login/")[2].decode()
    assert f"/static/{manifest['css/fairportal.css']}" in login_page


def test_given_debug_off_before_collectstatic_then_pages_still_render_with_plain_static_names(client, settings, db):
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": "core.storage.StaticFilesStorage"}}
    settings.STATIC_ROOT = "/nonexistent-static-root"

    response = client.get("/accounts/login/")

    assert response.status_code == 200
    assert "/static/css/fairportal.css" in response.content.decode()
