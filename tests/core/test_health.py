"""/healthz and /readyz: each failure mode produced for real (a closed broker port, no or a
stale heartbeat, a Slurm controller that does not answer), the access rule shared with /metrics."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from core.models import Heartbeat
from core.tasks import CONTROL, heartbeat


def test_given_no_database_access_then_healthz_answers_200(client):
    # No django_db mark: pytest-django fails any query, so this proves /healthz makes none.
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"].startswith("max-age=0")


@pytest.mark.django_db
def test_given_database_broker_heartbeat_and_cluster_up_then_readyz_is_200(client):
    heartbeat()  # the task's body, as the control worker runs it (the container test runs the real one)

    response = client.get("/readyz")

    assert response.status_code == 200, response.json()
    assert response.json() == {
        "status": "ready",
        "checks": {"database": "ok", "broker": "ok", "control_worker": "ok", "cluster": "ok"},
        "down": [],
    }


@pytest.mark.django_db
def test_given_broker_port_closed_then_readyz_is_503_naming_the_broker(client, dead_broker):
    heartbeat()

    response = client.get("/readyz")

    assert response.status_code == 503
    body = response.json()
    assert body["down"] == ["broker"]
    assert body["checks"]["broker"].startswith("unreachable (")
    assert "127.0.0.1:1" not in response.content.decode()  # no URLs in the answer


@pytest.mark.django_db
def test_given_no_heartbeat_then_readyz_is_503_naming_the_control_worker(client):
    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json()["down"] == ["control_worker"]
    assert "no heartbeat yet" in response.json()["checks"]["control_worker"]


@pytest.mark.django_db
def test_given_a_stale_heartbeat_then_readyz_is_503(client, settings):
    settings.READYZ_HEARTBEAT_MAX_AGE_SECONDS = 60
    Heartbeat.objects.create(name=CONTROL, at=timezone.now() - timedelta(seconds=90))

    response = client.get("/readyz")

    assert response.status_code == 503
    assert "last heartbeat 90s ago (limit 60s)" in response.json()["checks"]["control_worker"]


@pytest.mark.django_db
def test_given_slurm_controller_not_answering_then_readyz_is_503_naming_the_cluster(
    client, settings, monkeypatch, tmp_path: Path
):
    """A real squeue against a slurm.conf whose controller port nothing listens on; the sync
    records the failure as it does in production and /readyz reports it."""
    from queues.services.cluster import sync_cluster

    conf = tmp_path / "slurm.conf"
    conf.write_text(
        "ClusterName=down\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\nMessageTimeout=2\n"
        "NodeName=n1 CPUs=1 State=UNKNOWN\nPartitionName=main Nodes=n1 Default=YES\n"
    )
    monkeypatch.setenv("SLURM_CONF", str(conf))
    settings.CLUSTER_BACKEND = "slurm"
    settings.SLURM_BIN_DIR = ""
    heartbeat()

    report = sync_cluster()
    response = client.get("/readyz")

    assert report.backed_off
    assert response.status_code == 503
    body = response.json()
    assert body["down"] == ["cluster"]
    assert body["checks"]["cluster"].startswith("cluster default (backend slurm) unreachable since ")


@pytest.mark.django_db
def test_given_a_server_not_on_loopback_without_a_token_then_readyz_is_refused(client, settings):
    settings.BIND_IS_LOOPBACK = False
    settings.READYZ_TOKEN = ""

    response = client.get("/readyz")

    assert response.status_code == 401
    assert "READYZ_TOKEN" in response.json()["detail"]


@pytest.mark.django_db
def test_given_a_token_then_readyz_needs_it_even_on_loopback(client, settings):
    settings.READYZ_TOKEN = "s3cret-readyz-token"
    heartbeat()

    assert client.get("/readyz").status_code == 401
    assert client.get("/readyz", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert client.get("/readyz", HTTP_AUTHORIZATION="Bearer s3cret-readyz-token").status_code == 200
    assert client.get("/healthz").status_code == 200  # liveness never needs one


def test_given_only_metrics_token_then_readyz_uses_it(monkeypatch):
    """READYZ_TOKEN defaults to METRICS_TOKEN: settings read in a fresh interpreter."""
    import subprocess
    import sys

    env = {"METRICS_TOKEN": "metrics-token-value", "READYZ_TOKEN": ""}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; print(settings.READYZ_TOKEN)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
        env={**__import__("os").environ, "DJANGO_SETTINGS_MODULE": "fairportal.settings"},
    ).stdout.strip()
    assert out == "metrics-token-value"
