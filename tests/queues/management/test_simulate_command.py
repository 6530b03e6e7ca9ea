"""`manage.py simulate` runs the engine's CLI: the JSON contract, tables, --set, bad input."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCENARIO = ROOT / "tests" / "scenarios" / "kep4136_entry_penalty.yaml"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "simulate", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_given_scenario_when_simulated_then_json_contract_is_printed():
    result = run(str(SCENARIO))
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert {"scenario", "events", "workloads", "series", "summary"} <= set(output)
    assert {"utilization", "jainIndex", "waitSeconds", "perLocalQueue"} <= set(output["summary"])


def test_given_table_format_then_a_readable_table_is_printed():
    result = run(str(SCENARIO), "--format", "table")
    assert result.returncode == 0, result.stderr
    assert "LocalQueue" in result.stdout


def test_given_bad_set_path_then_one_line_error_and_status_2():
    result = run(str(SCENARIO), "--set", "localQueues.nobody/none.weight=3")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: ")


def test_given_missing_file_then_status_2(tmp_path):
    result = run(str(tmp_path / "absent.yaml"))
    assert result.returncode == 2
    assert result.stderr.startswith("error: ")
