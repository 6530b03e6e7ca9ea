"""Importing Kueue's published examples as they come: unsupported kinds skipped on request,
LocalQueues without a namespace, one line per missing flavor, and what a Configuration without
resourceWeights means."""

from __future__ import annotations

from io import StringIO

import pytest
import yaml
from django.core.management import call_command

from fairshare.policy import FairSharingPolicy
from queues.interop.kueue.apply import import_manifests
from queues.interop.kueue.configuration import compare_configuration
from queues.interop.kueue.export import export_manifests
from queues.interop.kueue.parse import parse_manifests
from queues.models import ClusterQueue, LocalQueue
from tests.queues.interop.conftest import MANIFESTS
from tests.queues.loop_fixtures import make_cluster_queue

pytestmark = pytest.mark.django_db

MIXED = MANIFESTS / "kueue-examples-mixed.yaml"


def run(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command(*args, stdout=out, stderr=err)
    except SystemExit as exit_info:
        return int(exit_info.code), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def test_given_unsupported_kinds_when_imported_plainly_then_each_is_an_error_naming_the_flag():
    status, _, err = run("kueue_import", str(MIXED), "--dry-run")
    assert status == 2
    assert "document 2 (Topology 'default'): kind: 'Topology' is not supported" in err
    assert "--skip-unsupported" in err
    assert not ClusterQueue.objects.exists()


def test_given_skip_unsupported_and_a_namespace_then_the_rest_imports_and_the_skipped_are_listed():
    status, out, err = run("kueue_import", str(MIXED), "--skip-unsupported", "--namespace", "team-a")
    assert (status, err) == (0, "")
    assert "skipped 7 document(s) of kinds fairportal does not model:" in out
    for line in (
        "document 1: Namespace team-a (v1)",
        "document 2: Topology default (kueue.x-k8s.io/v1beta2)",
        "document 3: AdmissionCheck sample-prov (kueue.x-k8s.io/v1beta2)",
        "document 4: ProvisioningRequestConfig prov-test-config (kueue.x-k8s.io/v1beta2)",
        "document 5: MultiKueueConfig multikueue-test (kueue.x-k8s.io/v1beta2)",
        "document 6: MultiKueueCluster multikueue-test-worker1 (kueue.x-k8s.io/v1beta2)",
        "document 7: Deployment kueue-controller-manager (apps/v1)",
    ):
        assert f"    {line}" in out
    assert LocalQueue.objects.get().key == "team-a/user-queue"
    assert "note: metadata.namespace not set: team-a (from --namespace)" in out


def test_given_a_local_queue_without_namespace_and_no_flag_then_the_error_suggests_it():
    status, _, err = run("kueue_import", str(MIXED), "--skip-unsupported", "--dry-run")
    assert status == 2
    assert "metadata.namespace: required for a LocalQueue (the tenant's namespace; or pass --namespace)" in err


def test_given_a_namespace_flag_that_contradicts_the_file_then_the_document_is_refused():
    parsed = parse_manifests(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, namespace: team-b}\n"
        "spec: {clusterQueue: cq}\n",
        namespace="team-a",
    )
    assert [str(problem) for problem in parsed.problems] == [
        "document 1 (LocalQueue 'q'): metadata.namespace: 'team-b' does not match --namespace 'team-a' "
        "(as kubectl, the file wins only when they agree)"
    ]


def test_given_a_missing_flavor_with_three_resources_then_one_error_line():
    status, _, err = run("kueue_import", str(MANIFESTS / "missing-flavor-many-resources.yaml"), "--dry-run")
    assert status == 2
    assert err.splitlines() == [
        "error: document 1 (ClusterQueue 'gpu-queue'): spec.resourceGroups[0].flavors[0].name: "
        "ResourceFlavor 'a100' is neither in the file nor stored",
        "nothing imported: 1 problem(s)",
    ]


CONFIGURATION = """
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
admissionFairSharing:
  usageHalfLifeTime: 168h
  usageSamplingInterval: 5m
"""


def test_given_a_configuration_without_resource_weights_then_the_report_says_kueue_weighs_all_one():
    parsed = parse_manifests(CONFIGURATION)
    running = FairSharingPolicy.from_mapping({"resourceWeights": {"memory": 1e-9, "ephemeral-storage": 1e-9}})
    result = compare_configuration(parsed.configurations[0], running)
    [note] = result.notes
    assert "Kueue then weighs every resource 1, so memory counted in bytes dominates" in note
    assert "running RESOURCE_WEIGHTS: ephemeral-storage=1e-09,memory=1e-09" in note
    assert note.endswith("set RESOURCE_WEIGHTS={}")
    assert f"    note: {note}" in result.lines()


def test_given_a_configuration_with_resource_weights_then_no_such_note():
    parsed = parse_manifests(CONFIGURATION + "  resourceWeights: {cpu: 1}\n")
    assert compare_configuration(parsed.configurations[0], FairSharingPolicy()).notes == []


def test_given_exceed_weight_when_exported_then_kept_with_a_warning_and_imported_back():
    cq = make_cluster_queue("shared", cpu="8")
    cq.preemption_within_cluster_queue = "ExceedWeight"
    cq.save()
    result = export_manifests()
    [queue] = [doc for doc in result.documents if doc["kind"] == "ClusterQueue"]
    assert queue["spec"]["preemption"]["withinClusterQueue"] == "ExceedWeight"
    assert any("withinClusterQueue ExceedWeight is a fairportal extension (KEP-752)" in w for w in result.warnings)
    report = import_manifests(yaml.safe_dump_all(result.documents), dry_run=True)
    assert report.count("unchanged") == len(result.documents)
