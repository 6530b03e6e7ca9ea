"""deploy/prometheus: the recording and alerting rules pass ``promtool check rules`` and their unit
tests (``promtool test rules``, Debian's promtool), and those unit tests catch a changed rule."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

from tests.queues.interop.prometheus_server import binary

RULES_DIR = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"
RULES = RULES_DIR / "fairportal.rules.yml"
RULE_TESTS = sorted((RULES_DIR / "tests").glob("*.test.yml"))


def promtool(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary("promtool"), *args], capture_output=True, text=True, timeout=120, cwd=cwd, check=False
    )


def test_given_the_rules_file_then_promtool_check_rules_accepts_it():
    result = promtool("check", "rules", str(RULES))

    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 14 rules found" in result.stdout


def test_given_the_rule_unit_tests_then_promtool_test_rules_passes_them_all():
    assert RULE_TESTS, "no rule tests in deploy/prometheus/tests"

    result = promtool("test", "rules", *map(str, RULE_TESTS))

    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAILED" not in result.stdout


def test_given_an_alert_that_fires_too_soon_then_the_unit_tests_fail(tmp_path):
    # The starved alert waits 15 minutes; fire it after one and its unit test must say so.
    (tmp_path / "tests").mkdir()
    rules = RULES.read_text()
    starved = "expr: fairportal_namespace_starved == 1\n        for: 15m"
    assert starved in rules
    (tmp_path / RULES.name).write_text(rules.replace(starved, starved.replace("15m", "1m")))
    for test in RULE_TESTS:
        shutil.copy(test, tmp_path / "tests" / test.name)

    result = promtool("test", "rules", *(f"tests/{test.name}" for test in RULE_TESTS), cwd=tmp_path)

    assert result.returncode != 0
    assert "alertname: FairportalTenantStarved, time: 10m" in result.stdout + result.stderr


def test_given_the_commands_docs_prometheus_shows_when_run_from_the_root_then_they_succeed():
    root = RULES_DIR.parents[1]
    doc = (root / "docs" / "prometheus.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", doc, flags=re.DOTALL)
    commands = [line for block in blocks for line in block.splitlines() if line.strip()]
    assert [command.split()[:3] for command in commands] == [
        ["promtool", "check", "rules"],
        ["promtool", "test", "rules"],
    ]

    for command in commands:
        result = promtool(*shlex.split(command)[1:], cwd=root)

        assert result.returncode == 0, f"{command}: {result.stdout}{result.stderr}"
