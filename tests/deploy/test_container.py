"""The image (Containerfile) built with Debian's podman and run for real: web, the control
worker and beat against the test PostgreSQL (own database) and Redis; /healthz, /readyz (503
naming the missing worker, then 200), a sign-in, an API token made inside the container, and a
workload submitted through the API and admitted by the container's worker."""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator

import pytest

from tests.deploy.container import IMAGE, build_image, free_port, podman, require_podman

pytestmark = pytest.mark.container

SETUP = """
from decimal import Decimal
import os
from django.contrib.auth import get_user_model
from core.models import TenantMembership
from fairshare.quantities import parse_millis
from queues.models import ClusterQueue, ClusterQueueQuota, LocalQueue, Namespace, ResourceFlavor
alice = get_user_model().objects.create_user("alice", password=os.environ["ALICE_PASSWORD"])
cq = ClusterQueue.objects.create(name="cq")
ClusterQueueQuota.objects.create(cluster_queue=cq, flavor=ResourceFlavor.objects.create(name="default"),
                                 resource="cpu", nominal=parse_millis("8"))
ns = Namespace.objects.create(name="team-a")
LocalQueue.objects.create(namespace=ns, name="main", cluster_queue=cq, weight=Decimal(1))
TenantMembership.objects.create(user=alice, namespace=ns, role="editor")
print("uid", os.getuid())
"""


def _database_urls() -> tuple[str, str]:
    base = os.environ.get("DATABASE_URL", "")
    assert base.startswith("postgres"), "the container test runs on PostgreSQL: run it through `make test`"
    parsed = urllib.parse.urlsplit(base)
    admin = parsed._replace(path="/postgres").geturl()
    return admin, parsed._replace(path=f"{parsed.path}_container").geturl()


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Iterator[dict]:
    require_podman()
    import psycopg

    build_seconds = build_image()
    admin_url, database_url = _database_urls()
    name = urllib.parse.urlsplit(database_url).path.lstrip("/")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    broker = os.environ.get("TEST_CELERY_BROKER_URL", "redis://127.0.0.1:6379/5")
    import redis

    redis.Redis.from_url(broker).flushdb()
    port = free_port()
    suffix = uuid.uuid4().hex[:8]
    env = {
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(64),
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": broker,
        "CELERY_RESULT_BACKEND": broker,
        "BIND_ADDRESS": "127.0.0.1",  # host network: loopback only
        "PORT": str(port),
        "READYZ_TOKEN": secrets.token_urlsafe(24),
        "HEARTBEAT_INTERVAL": "2s",
        "ADMISSION_PASS_INTERVAL": "2s",
        "WEB_CONCURRENCY": "1",
    }
    env_file = tmp_path_factory.mktemp("container") / "fairportal.env"  # as docs/deploying.md shows
    env_file.write_text("".join(f"{key}={value}\n" for key, value in env.items()))
    run = ["run", "--network", "host", "--env-file", str(env_file)]
    names: list[str] = []

    def start(role: str) -> str:
        container = f"fp-site-test-{role}-{suffix}"
        podman(*run, "--detach", "--name", container, IMAGE, role)
        names.append(container)
        return container

    try:
        podman(*run, "--rm", IMAGE, "migrate", timeout=300)
        alice_password = secrets.token_urlsafe(16)
        setup = podman(*run, "--rm", "--env", f"ALICE_PASSWORD={alice_password}", IMAGE, "manage", "shell", "-c", SETUP)
        yield {
            "env": env,
            "run": run,
            "start": start,
            "names": names,
            "base": f"http://127.0.0.1:{port}",
            "alice_password": alice_password,
            "setup_output": setup.stdout,
            "build_seconds": build_seconds,
        }
    finally:
        for container in names:
            podman("rm", "--force", "--time", "5", container, check=False)


def _get(url: str, token: str | None = None, **headers: str) -> tuple[int, bytes]:
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except (urllib.error.URLError, OSError):
        return 0, b""


def _wait(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def test_given_the_image_then_web_worker_and_beat_serve_readyz_login_and_admission(stack):
    base, token = stack["base"], stack["env"]["READYZ_TOKEN"]
    assert "uid 10001" in stack["setup_output"]  # a non-root user

    web = stack["start"]("web")
    _wait(lambda: _get(f"{base}/healthz")[0] == 200, 60, "/healthz")

    # Web alone: not ready, and /readyz says it is the control worker's heartbeat that is missing.
    status, body = _get(f"{base}/readyz", token)
    assert status == 503, body
    assert json.loads(body)["down"] == ["control_worker"]
    assert _get(f"{base}/readyz")[0] == 401  # READYZ_TOKEN set: the bearer token is required

    stack["start"]("worker")
    stack["start"]("beat")
    _wait(lambda: _get(f"{base}/readyz", token)[0] == 200, 90, "/readyz 200 with worker and beat")
    assert json.loads(_get(f"{base}/readyz", token)[1])["checks"] == {
        "database": "ok",
        "broker": "ok",
        "control_worker": "ok",
        "cluster": "ok",
    }

    # Sign in through the login form (CSRF cookie and field), then a page behind the login.
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = opener.open(f"{base}/accounts/login/", timeout=10).read().decode()
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    stylesheet = re.search(r'href="(/static/[^"]+\.css)"', page)
    assert stylesheet and _get(base + stylesheet.group(1))[0] == 200  # collected at build, served by WhiteNoise
    form = urllib.parse.urlencode(
        {"username": "alice", "password": stack["alice_password"], "csrfmiddlewaretoken": csrf}
    ).encode()
    signed_in = opener.open(urllib.request.Request(f"{base}/accounts/login/", data=form), timeout=10)
    assert signed_in.status == 200 and not signed_in.url.endswith("/accounts/login/"), signed_in.url
    assert any(cookie.name == "sessionid" for cookie in jar)

    # An API token made inside the container, a submission, and the container's worker admits it.
    made = podman(*stack["run"], "--rm", IMAGE, "manage", "create_api_token", "alice")
    key = re.search(r"Generated token (\S+) for user alice", made.stdout).group(1)
    api = {"Authorization": f"Token {key}", "Content-Type": "application/json", "X-Request-ID": "container-submit-1"}
    workload = {"name": "job-1", "local_queue": "team-a/main", "pod_sets": [{"count": 1, "requests": {"cpu": "2"}}]}
    request = urllib.request.Request(f"{base}/api/v1/workloads/", data=json.dumps(workload).encode(), headers=api)
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 201
        assert response.headers["X-Request-ID"] == "container-submit-1"
        created = json.load(response)

    def admitted() -> bool:
        status, body = _get(f"{base}/api/v1/workloads/{created['id']}/", Authorization=f"Token {key}")
        return status == 200 and json.loads(body)["state"] == "Admitted"

    _wait(admitted, 60, "the workload to be admitted")

    # The web container logs JSON, the submission's line with its request id.
    logs = podman("logs", web).stdout + podman("logs", web).stderr
    entries = [json.loads(line) for line in logs.splitlines() if line.startswith("{")]
    assert any(e.get("request_id") == "container-submit-1" and e.get("path") == "/api/v1/workloads/" for e in entries)
    assert " /readyz HTTP/1.1" not in logs  # gunicorn's text access log is off: the JSON line replaces it
    print(f"image build {stack['build_seconds']:.0f}s")
