"""compose.yaml, the systemd units and deploy/run-role run the Procfile's roles; the units pass
`systemd-analyze verify` (real, against a root holding this host's system units)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.procfile import procfile_command

ROOT = Path(__file__).resolve().parents[2]
UNITS = ROOT / "deploy" / "systemd"
ROLES = ("web", "worker", "whatif", "beat")


def run_role_command(role: str, var_dir: str = "/var/lib/fairportal") -> list[str]:
    out = subprocess.run(
        [str(ROOT / "deploy" / "run-role"), role],
        capture_output=True,
        text=True,
        check=True,
        env={
            **os.environ,
            "FAIRPORTAL_PRINT_COMMAND": "1",
            "FAIRPORTAL_VENV": "/opt/fairportal/venv",
            "FAIRPORTAL_VAR_DIR": var_dir,
        },
    ).stdout
    return out.split()


@pytest.mark.parametrize("role", ROLES)
def test_given_a_role_then_run_role_runs_the_procfile_command_from_the_venv(role):
    expected = [
        arg.replace(".venv/bin/", "/opt/fairportal/venv/bin/").replace("=var/", "=/var/lib/fairportal/")
        for arg in procfile_command(role)
    ]
    assert run_role_command(role) == expected


def test_given_an_unknown_role_then_run_role_refuses_it():
    result = subprocess.run([str(ROOT / "deploy" / "run-role"), "banner"], capture_output=True, text=True)
    assert result.returncode == 2


def test_given_compose_yaml_then_it_runs_the_four_roles_beside_postgres_and_redis():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]

    assert set(services) == {"migrate", "web", "worker", "whatif", "beat", "postgres", "redis"}
    for role in ROLES:
        service = services[role]
        assert service["command"] == [role]
        assert service["image"] == "localhost/fairportal:latest"
        assert service["build"] == {"context": ".", "dockerfile": "Containerfile"}
        assert service["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        env = service["environment"]
        assert (
            env["DATABASE_URL"].startswith("postgres://fairportal:")
            and env["CELERY_BROKER_URL"] == "redis://redis:6379/0"
        )
        assert env["LOG_FORMAT"] == "json"
    assert services["migrate"]["command"] == ["migrate"]
    assert services["beat"]["deploy"]["replicas"] == 1
    assert services["web"]["environment"]["BIND_ADDRESS"] == "0.0.0.0"
    assert services["web"]["ports"] == ["127.0.0.1:8000:8000"]
    assert "/healthz" in " ".join(services["web"]["healthcheck"]["test"])
    # Roles the image cannot run would fail only at start: each one is a Procfile process.
    procfile_roles = {line.split(":")[0] for line in (ROOT / "Procfile").read_text().splitlines() if line}
    assert set(ROLES) <= procfile_roles


def test_given_the_units_then_each_runs_one_role_and_the_target_wants_them_all():
    target = (UNITS / "fairportal.target").read_text()
    for role in ROLES:
        unit = (UNITS / f"fairportal-{role}.service").read_text()
        assert f"ExecStart=/opt/fairportal/app/deploy/run-role {role}\n" in unit
        assert "EnvironmentFile=/etc/fairportal/fairportal.env" in unit
        assert "User=fairportal" in unit and "UMask=0077" in unit
        assert "WantedBy=fairportal.target" in unit
        assert f"fairportal-{role}.service" not in target  # joined by enabling, so beat stays on one host
    assert sorted(path.name for path in UNITS.glob("*beat*")) == ["fairportal-beat.service"]  # exactly one beat
    env = (UNITS / "fairportal.env").read_text()
    assert "DEBUG=false" in env and "SECRET_KEY_FILE=" in env


def test_given_the_units_then_systemd_analyze_verify_finds_nothing(tmp_path):
    """A root with this host's system units, the units in /etc/systemd/system and run-role where
    ExecStart names it (verify checks that the command exists and is executable)."""
    systemd_analyze = shutil.which("systemd-analyze")
    assert systemd_analyze, "systemd-analyze is part of Debian's systemd package"
    system = tmp_path / "usr" / "lib" / "systemd"
    system.mkdir(parents=True)
    shutil.copytree("/usr/lib/systemd/system", system / "system", symlinks=True)
    etc = tmp_path / "etc" / "systemd" / "system"
    etc.mkdir(parents=True)
    for unit in UNITS.glob("fairportal*"):
        if unit.suffix in {".service", ".target"}:
            shutil.copy(unit, etc / unit.name)
    deploy = tmp_path / "opt" / "fairportal" / "app" / "deploy"
    deploy.mkdir(parents=True)
    shutil.copy2(ROOT / "deploy" / "run-role", deploy / "run-role")
    names = sorted(path.name for path in etc.iterdir())
    services = sorted(f"fairportal-{role}.service" for role in ROLES)
    assert names == sorted([*services, "fairportal-metrics.service", "fairportal.target"])

    result = subprocess.run(
        [systemd_analyze, "verify", f"--root={tmp_path}", *names], capture_output=True, text=True, cwd=etc
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and result.stderr == "", result.stdout + result.stderr

    # docs/deploying.md's `systemctl enable fairportal.target`, offline in the same root: the
    # target is wanted by multi-user.target and wants the four services.
    enabled = subprocess.run(
        ["systemctl", f"--root={tmp_path}", "enable", "fairportal.target", *services], capture_output=True, text=True
    )
    assert enabled.returncode == 0, enabled.stderr
    assert (etc / "multi-user.target.wants" / "fairportal.target").is_symlink()
    wants = sorted(path.name for path in (etc / "fairportal.target.wants").iterdir())
    assert wants == services  # fairportal-metrics.service is pulled in by their Requires=

    # The check bites: a unit with a typo is reported.
    (etc / "fairportal-beat.service").write_text(
        (etc / "fairportal-beat.service").read_text().replace("UMask", "UMsak")
    )
    broken = subprocess.run(
        [systemd_analyze, "verify", f"--root={tmp_path}", "fairportal-beat.service"],
        capture_output=True,
        text=True,
        cwd=etc,
    )
    assert "Unknown key" in broken.stderr and "UMsak" in broken.stderr
