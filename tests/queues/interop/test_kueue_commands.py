"""``kueue_import`` and ``kueue_export`` from the command line: readable output, one line per
error on stderr, exit status 2 on bad input, and the PolicyChange rows marked ``cli``."""

from __future__ import annotations

import json
from io import StringIO

import pytest
import yaml
from django.core.management import call_command

from core.models import PolicyChange
from queues.models import ClusterQueue
from tests.queues.interop.conftest import MANIFESTS

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_given_manifest_file_when_dry_run_then_report_is_printed_and_nothing_saved():
    out, err = run("kueue_import", str(MANIFESTS / "cluster-v1beta2.yaml"), "--dry-run")

    assert "created   ClusterQueue gpu-training" in out
    assert "    kept (not modelled, exported again): spec.flavorFungibility, spec.preemption.borrowWithinCohort" in out
    assert out.rstrip().endswith("19 created, 0 updated, 0 unchanged (dry run: nothing saved)")
    assert err == "" and not ClusterQueue.objects.exists()


def test_given_manifest_file_when_applied_then_audit_rows_come_from_the_cli_surface():
    run("kueue_import", str(MANIFESTS / "cluster-v1beta2.yaml"))

    assert ClusterQueue.objects.count() == 3
    assert set(PolicyChange.objects.values_list("surface", flat=True)) == {"cli"}


def test_given_invalid_manifest_when_imported_then_one_line_per_error_and_exit_status_2(capsys):
    err = StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("kueue_import", str(MANIFESTS / "invalid-quantities.yaml"), stdout=StringIO(), stderr=err)

    assert exit_info.value.code == 2
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("error: document 3 (ClusterQueue 'negative'): spec.resourceGroups[0]")
    assert lines[1].startswith("error: document 4 (ClusterQueue 'not-a-quantity'):")
    assert lines[2] == "nothing imported: 2 problem(s)"


def test_given_missing_file_when_imported_then_exit_status_2(tmp_path):
    err = StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("kueue_import", str(tmp_path / "nope.yaml"), stdout=StringIO(), stderr=err)

    assert exit_info.value.code == 2
    assert err.getvalue().startswith(f"error: {tmp_path / 'nope.yaml'}: cannot be read:")


def test_given_json_flag_when_imported_then_report_is_machine_readable():
    out, _ = run("kueue_import", str(MANIFESTS / "cluster-v1beta2.yaml"), "--dry-run", "--json")

    data = json.loads(out)
    assert data["dryRun"] is True and data["applied"] is False
    assert data["summary"] == {"created": 19, "updated": 0, "unchanged": 0}


def test_given_stored_cluster_when_exported_as_v1beta1_then_yaml_documents_use_that_version(tmp_path):
    run("kueue_import", str(MANIFESTS / "cluster-v1beta2.yaml"))

    out, err = run("kueue_export", "--api-version", "v1beta1")

    documents = list(yaml.safe_load_all(out))
    assert len(documents) == 16
    assert {d["apiVersion"] for d in documents} == {"kueue.x-k8s.io/v1beta1"}
    assert "warning: Cohort org: admissionScope on a Cohort follows KEP-4136" in err
    run("kueue_export", "-o", str(tmp_path / "out.yaml"))
    assert (tmp_path / "out.yaml").read_text().count("kind: LocalQueue") == 5
