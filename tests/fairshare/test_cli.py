"""The ``simulate`` command line: JSON and table output, --set, one-line errors with status 2."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from fairshare.simulation.cli import main
from tests.fairshare.builders import SCENARIOS

REPO = Path(__file__).resolve().parents[2]
TABLE2 = str(SCENARIOS / "volcano_table2.yaml")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


def test_json_output_follows_the_contract():
    status, out, err = run("simulate", TABLE2)
    assert (status, err) == (0, "")
    result = json.loads(out)
    assert set(result) >= {"scenario", "events", "workloads", "series", "summary"}
    assert result["scenario"] == "volcano-table-2"
    assert {e["type"] for e in result["events"]} == {"admitted"}


def test_table_output_has_a_row_per_local_queue_and_the_totals():
    status, out, _ = run(TABLE2, "--format", "table")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("scenario volcano-table-2")
    header = next(line for line in lines if line.startswith("LocalQueue"))
    assert "wait p95" in header and "avg cpu" in header
    assert sum(1 for line in lines if line.startswith("ns")) == 4
    assert any(line.startswith("utilization: cpu 100.0%") for line in lines)
    assert any(line.startswith("Jain index") for line in lines)


def test_set_changes_the_outcome():
    def q1_total(*sets: str) -> int:
        _, out, _ = run(TABLE2, *sets)
        workloads = json.loads(out)["workloads"].values()
        return sum(1 for w in workloads if w["state"] == "Admitted" and w["clusterQueue"] == "q1")

    assert q1_total() == 4
    assert q1_total("--set", "clusterQueues.q2.weight=1") == 8


def test_a_bad_scenario_prints_one_line_naming_the_field_and_exits_2():
    status, out, err = run(TABLE2, "--set", "clusterQueues.q1.weight=-1")
    assert (status, out) == (2, "")
    assert err == "error: clusterQueues[0].weight: must not be negative, got -1\n"


def test_a_bad_set_path_exits_2(tmp_path):
    status, _, err = run(TABLE2, "--set", "clusterQueues.q9.weight=1")
    assert status == 2
    assert err == "error: --set clusterQueues.q9.weight: no clusterQueues entry named 'q9'\n"


def test_a_missing_file_exits_2(tmp_path):
    status, _, err = run(str(tmp_path / "missing.yaml"))
    assert status == 2 and err.startswith("error: ") and err.count("\n") == 1


def test_bad_arguments_exit_2():
    status, _, err = run(TABLE2, "--format", "xml")
    assert status == 2 and err.startswith("error: ")


def test_python_dash_m_runs_the_command():
    completed = subprocess.run(
        [sys.executable, "-m", "fairshare.simulation.cli", TABLE2, "--format", "table"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0
    assert completed.stdout.startswith("scenario volcano-table-2")


def test_output_does_not_depend_on_string_hash_randomisation():
    outputs = set()
    for seed in ("1", "2"):
        completed = subprocess.run(
            [sys.executable, "-m", "fairshare.simulation.cli", str(SCENARIOS / "kep752_dominant_share.yaml")],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert completed.returncode == 0
        outputs.add(completed.stdout)
    assert len(outputs) == 1


def test_given_a_scenario_over_a_size_limit_then_exit_2_naming_it_unless_limits_are_lifted(tmp_path):
    document = {
        "name": "many-namespaces",
        "clock": {"horizon": "1h", "tick": "1m"},
        "namespaces": [{"name": f"ns-{i}"} for i in range(2_001)],
    }
    path = tmp_path / "big.json"
    path.write_text(json.dumps(document))

    status, _, err = run(str(path))
    assert status == 2
    assert "namespaces: at most 2,000 entries" in err

    status, out, _ = run(str(path), "--no-size-limits")
    assert status == 0 and "many-namespaces" in out
