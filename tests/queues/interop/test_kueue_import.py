"""Importing Kueue manifests: fields land on the models, unknown fields are kept, bad input is
named precisely and saves nothing, dry runs change nothing, and every change is audited."""

from __future__ import annotations

from decimal import Decimal

import pytest

from core.models import PolicyChange, Surface
from fairshare.quantities import parse_millis
from queues.interop.kueue.apply import import_manifests
from queues.interop.kueue.report import ImportFailed
from queues.models import (
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    LocalQueue,
    Namespace,
    ResourceFlavor,
    WorkloadPriorityClass,
)
from tests.queues.interop.conftest import manifest

pytestmark = pytest.mark.django_db

GPU = "nvidia.com/gpu"


def policy_rows() -> dict[str, int]:
    """How many rows each policy table holds (to prove nothing was written)."""
    return {
        model.__name__: model.objects.count()
        for model in (
            ResourceFlavor,
            WorkloadPriorityClass,
            Cohort,
            CohortQuota,
            ClusterQueue,
            ClusterQueueQuota,
            Namespace,
            LocalQueue,
            PolicyChange,
        )
    }


def errors_of(text: str) -> list[str]:
    with pytest.raises(ImportFailed) as failure:
        import_manifests(text, dry_run=False)
    return [str(problem) for problem in failure.value.report.problems]


# -- a realistic cluster --------------------------------------------------------------------


def test_given_v1beta2_cluster_when_imported_then_cohort_tree_weights_and_modes_are_stored(cluster_v1beta2):
    report = import_manifests(cluster_v1beta2, dry_run=False)

    assert report.ok
    org, research, platform = (Cohort.objects.get(name=n) for n in ("org", "research", "platform"))
    assert org.parent is None and org.admission_mode == "UsageBasedAdmissionFairSharing"
    assert research.parent == org and research.weight == Decimal(2)
    assert platform.parent == org and platform.weight == Decimal("0.5")  # "500m"
    lent = CohortQuota.objects.get(cohort=research)
    assert (lent.flavor.name, lent.resource, lent.nominal, lent.lending_limit) == ("a100", GPU, 8000, 4000)


def test_given_v1beta2_cluster_when_imported_then_quotas_keep_limits_and_flavor_order(cluster_v1beta2):
    import_manifests(cluster_v1beta2, dry_run=False)

    training = ClusterQueue.objects.get(name="gpu-training")
    rows = {(q.flavor.name, q.resource): q for q in training.quotas.select_related("flavor")}
    assert rows[("default-cpu", "memory")].nominal == parse_millis("1Ti")
    assert rows[("default-cpu", "memory")].borrowing_limit == parse_millis("512Gi")
    assert rows[("a100", GPU)].borrowing_limit == 8000 and rows[("a100", GPU)].lending_limit == 8000
    assert rows[("spot-gpu", GPU)].borrowing_limit is None  # unlimited
    assert [rows[k].flavor_order for k in [("default-cpu", "cpu"), ("a100", GPU), ("spot-gpu", GPU)]] == [0, 1, 2]
    assert (training.weight, training.preemption_within_cluster_queue, training.reclaim_within_cohort) == (
        Decimal(2),
        "LowerPriority",
        "Any",
    )
    batch = ClusterQueue.objects.get(name="batch-cpu")
    cpu = batch.quotas.get(resource="cpu")
    assert (cpu.nominal, cpu.lending_limit) == (250, 100)  # 250m and 100m exactly


def test_given_v1beta2_cluster_when_imported_then_local_queues_and_missing_namespaces_are_created(cluster_v1beta2):
    report = import_manifests(cluster_v1beta2, dry_run=False)

    vision = LocalQueue.objects.get(namespace__name="team-vision", name="training")
    assert vision.cluster_queue.name == "gpu-training" and vision.weight == Decimal(3)
    assert LocalQueue.objects.get(namespace__name="data-eng", name="etl").weight == Decimal("1.5")
    assert LocalQueue.objects.get(namespace__name="team-language", name="serving").stop_policy == "HoldAndDrain"
    created_namespaces = sorted(r.name for r in report.objects if r.kind == "Namespace")
    assert created_namespaces == ["data-eng", "team-language", "team-vision"]
    assert Namespace.objects.get(name="team-vision").weight == Decimal(1)


def test_given_unknown_fields_when_imported_then_they_are_kept_on_the_object_and_reported(cluster_v1beta2):
    report = import_manifests(cluster_v1beta2, dry_run=False)

    training = ClusterQueue.objects.get(name="gpu-training")
    assert training.kueue_extra["spec.flavorFungibility"] == {
        "whenCanBorrow": "TryNextFlavor",
        "whenCanPreempt": "TryNextFlavor",
    }
    assert training.kueue_extra["spec.preemption.borrowWithinCohort"] == {"policy": "Never"}
    assert "spec.namespaceSelector" not in training.kueue_extra  # {} is the default, written back on export
    language = LocalQueue.objects.get(namespace__name="team-language", name="training")
    assert language.kueue_extra == {
        "spec.wallTimePolicy": {"wallTimeAllocatedHours": 100, "actionWhenWallTimeExhausted": "Hold"}
    }
    reported = {r.name: r.unknown_fields for r in report.objects}
    assert reported["gpu-training"] == ["spec.flavorFungibility", "spec.preemption.borrowWithinCohort"]
    assert reported["a100"] == ["spec.nodeTaints"]
    assert reported["default-cpu"] == ["metadata.labels"]


def test_given_flavor_description_annotation_when_imported_then_it_becomes_the_description(cluster_v1beta2):
    import_manifests(cluster_v1beta2, dry_run=False)

    a100 = ResourceFlavor.objects.get(name="a100")
    assert a100.description == "NVIDIA A100 80GB, 8 per node"
    assert a100.node_labels == {"cloud.google.com/gke-accelerator": "nvidia-tesla-a100"}
    assert "metadata.annotations" not in a100.kueue_extra


def test_given_priority_classes_when_imported_then_values_and_descriptions_are_stored(cluster_v1beta2):
    import_manifests(cluster_v1beta2, dry_run=False)

    assert list(WorkloadPriorityClass.objects.values_list("name", "value", "description")) == [
        ("production", 1000, "Deadlines this week"),
        ("best-effort", -10, ""),
    ]


def test_given_same_cluster_in_v1beta1_spelling_when_imported_over_v1beta2_then_nothing_changes(cluster_v1beta2):
    import_manifests(cluster_v1beta2, dry_run=False)

    report = import_manifests(manifest("cluster-v1beta1.yaml"), dry_run=False)

    assert {r.action for r in report.objects} == {"unchanged"}
    assert len(report.objects) == 16


def test_given_kubectl_get_list_when_imported_then_status_and_server_metadata_are_ignored_with_notes(cluster_v1beta2):
    import_manifests(cluster_v1beta2, dry_run=False)

    report = import_manifests(manifest("kubectl-get-v1beta1.yaml"), dry_run=False)

    shared = ClusterQueue.objects.get(name="shared-cpu")
    assert shared.kueue_extra == {}
    assert shared.cohort.name == "everyone"
    by_name = {(r.kind, r.name): r for r in report.objects}
    assert by_name[("Cohort", "everyone")].notes == ["cohort 'everyone' has no Cohort document; created with defaults"]
    notes = by_name[("ClusterQueue", "shared-cpu")].notes
    assert "status ignored: it is observed state, which fairportal computes itself" in notes
    assert "server-set metadata ignored: uid, resourceVersion, generation, creationTimestamp" in notes
    assert any("last-applied-configuration ignored" in note for note in notes)
    assert LocalQueue.objects.get(namespace__name="team-ops", name="main").cluster_queue == shared


# -- dry run, diff, audit -------------------------------------------------------------------


def test_given_dry_run_when_importing_then_nothing_is_saved_and_the_report_lists_creations(cluster_v1beta2):
    before = policy_rows()

    report = import_manifests(cluster_v1beta2, dry_run=True)

    assert policy_rows() == before
    assert report.dry_run and report.count("created") == 19
    assert "dry run: nothing saved" in report.summary()


def test_given_stored_cluster_when_dry_run_of_edited_file_then_diff_shows_before_and_after(cluster_v1beta2):
    import_manifests(cluster_v1beta2, dry_run=False)
    edited = cluster_v1beta2.replace("nominalQuota: 16\n", "nominalQuota: 24\n").replace('weight: "3"', 'weight: "4"')
    before = policy_rows()

    report = import_manifests(edited, dry_run=True)

    assert policy_rows() == before
    changed = {r.name: [str(c) for c in r.changes] for r in report.objects if r.action == "updated"}
    assert changed == {
        "gpu-training": ["quotas[a100/nvidia.com/gpu].nominal: 16 -> 24"],
        "team-vision/training": ["weight: 3 -> 4"],
    }
    assert report.count("unchanged") == 14
    assert ClusterQueue.objects.get(name="gpu-training").quotas.get(flavor__name="a100").nominal == 16000


def test_given_import_from_the_command_line_then_each_created_object_has_an_audit_row(cluster_v1beta2):
    import_manifests(cluster_v1beta2, dry_run=False, surface=Surface.CLI)

    rows = PolicyChange.objects.filter(surface=Surface.CLI)
    assert rows.count() == 19
    training = rows.get(object_type="clusterqueue", object_repr="gpu-training")
    assert training.action == "create" and training.before is None
    assert {
        "flavor": "a100",
        "resource": GPU,
        "nominal": "16",
        "borrowing_limit": "8",
        "lending_limit": "8",
        "flavor_order": 1,
    } in training.after["quotas"]
    assert "Kueue import, document 9" in training.note


def test_given_stored_cluster_when_reimported_with_a_change_then_one_update_row_with_before_and_after(cluster_v1beta2):
    import_manifests(cluster_v1beta2, dry_run=False)
    PolicyChange.objects.all().delete()

    import_manifests(
        cluster_v1beta2.replace("queueingStrategy: StrictFIFO", "queueingStrategy: BestEffortFIFO"),
        dry_run=False,
        surface=Surface.API,
    )

    row = PolicyChange.objects.get()
    assert (row.surface, row.action, row.object_repr) == ("api", "update", "gpu-inference")
    assert row.changed_fields() == ["queueing_strategy"]


def test_given_admin_edited_description_when_manifest_has_no_annotation_then_description_is_kept(cluster_v1beta2):
    import_manifests(cluster_v1beta2, dry_run=False)
    ClusterQueue.objects.filter(name="batch-cpu").update(description="nightly ETL")

    report = import_manifests(cluster_v1beta2, dry_run=False)

    assert ClusterQueue.objects.get(name="batch-cpu").description == "nightly ETL"
    assert report.count("updated") == 0


# -- bad input -------------------------------------------------------------------------------


def test_given_bad_quantities_when_imported_then_each_is_named_and_nothing_is_saved():
    before = policy_rows()

    errors = errors_of(manifest("invalid-quantities.yaml"))

    assert errors == [
        "document 3 (ClusterQueue 'negative'): spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: "
        "must not be negative, got '-4'",
        "document 4 (ClusterQueue 'not-a-quantity'): spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: "
        "'lots' is not a valid Kubernetes quantity (e.g. 500m, 2Gi, 4)",
    ]
    assert policy_rows() == before


def test_given_lending_limit_above_nominal_when_imported_then_model_rule_names_the_manifest_field():
    text = manifest("invalid-quantities.yaml").split("---\n")
    valid_and_lending = "---\n".join([text[0], text[1], text[4]])
    before = policy_rows()

    errors = errors_of(valid_and_lending)

    assert errors == [
        "document 3 (ClusterQueue 'lends-too-much'): spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: "
        "cannot exceed the nominal quota (64Gi)"
    ]
    assert policy_rows() == before  # the flavor and cohort of documents 1-2 were rolled back too


def test_given_wrong_references_and_spellings_when_imported_then_every_problem_is_reported():
    errors = errors_of(manifest("invalid-references.yaml"))

    assert errors == [
        "document 2 (ClusterQueue 'old-spelling'): spec.cohort: is the v1beta1 name; "
        "kueue.x-k8s.io/v1beta2 calls it 'cohortName'",
        "document 4 (ClusterQueue 'bad-mode'): spec.admissionScope.admissionMode: must be one of "
        "NoAdmissionFairSharing, UsageBasedAdmissionFairSharing, DominantResourceShare, TimeAware, got 'Fastest'",
        "document 8 (Workload 'job-1'): kind: 'Workload' is not supported "
        "(supported: ResourceFlavor, Cohort, ClusterQueue, LocalQueue, WorkloadPriorityClass, MultiKueueCluster, "
        "MultiKueueConfig, AdmissionCheck, Configuration; "
        "--skip-unsupported skips the others)",
    ]


def test_given_references_to_missing_objects_and_a_cycle_when_imported_then_database_checks_name_fields():
    documents = manifest("invalid-references.yaml").split("---\n")
    keep = [documents[i] for i in (0, 2, 4, 5, 6, 8)]  # drop the three parse errors of the previous test

    errors = errors_of("---\n".join(keep))

    assert errors == [
        "document 5 (Cohort 'egg'): spec.parentName: would create a cycle: egg -> chicken -> egg",
        "document 2 (ClusterQueue 'missing-flavor'): spec.resourceGroups[0].flavors[0].name: "
        "ResourceFlavor 'h100' is neither in the file nor stored",
        "document 3 (LocalQueue 'team-x/orphan'): spec.clusterQueue: ClusterQueue 'does-not-exist' is neither in "
        "the file nor stored",
        "document 6 (LocalQueue 'team-x/Not_A_Name'): spec.clusterQueue: ClusterQueue 'missing-flavor' could not "
        "be imported (see document 2)",
    ]
    assert not Cohort.objects.exists() and not Namespace.objects.exists()


def test_given_broken_yaml_when_imported_then_the_line_is_named():
    assert errors_of(manifest("invalid-yaml.yaml")) == [
        "file: not valid YAML at line 5, column 1: expected ',' or ']', but got '<stream end>'"
    ]


def test_given_borrowing_limit_without_cohort_when_imported_then_rejected_as_kueue_does():
    text = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: alone}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 4, borrowingLimit: 2}]
"""
    assert errors_of(text) == [
        "document 1 (ClusterQueue 'alone'): spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: "
        "must not be set when spec.cohort is empty (nothing to borrow from)"
    ]


def test_given_flavor_missing_a_covered_resource_when_imported_then_rejected():
    text = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: partial}
spec:
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 4}]
"""
    assert errors_of(text) == [
        "document 1 (ClusterQueue 'partial'): spec.resourceGroups[0].flavors[0].resources: "
        "must list exactly the coveredResources ['cpu', 'memory'], got ['cpu']"
    ]


def test_given_negative_weight_and_duplicate_names_when_imported_then_both_reported():
    text = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: main, namespace: team-a}
spec: {clusterQueue: cq, fairSharing: {weight: "-1"}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: org}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: org}
"""
    assert errors_of(text) == [
        "document 1 (LocalQueue 'main'): spec.fairSharing.weight: must be 0 or more, got '-1'",
        "document 3 (Cohort 'org'): metadata.name: 'org' is already defined by document 2",
    ]


def test_given_local_queue_moved_while_holding_workloads_when_imported_then_model_rule_blocks_it(cluster_v1beta2):
    from queues import services

    import_manifests(cluster_v1beta2, dry_run=False)
    queue = LocalQueue.objects.get(namespace__name="data-eng", name="etl")
    services.submit_workload(local_queue=queue, name="job-1", pod_sets=[{"count": 1, "requests": {"cpu": "100m"}}])
    moved = cluster_v1beta2.replace(
        "  name: etl\n  namespace: data-eng\nspec:\n  clusterQueue: batch-cpu",
        "  name: etl\n  namespace: data-eng\nspec:\n  clusterQueue: gpu-training",
    )

    errors = errors_of(moved)

    assert errors == [
        "document 15 (LocalQueue 'data-eng/etl'): spec.clusterQueue: cannot change while the LocalQueue holds "
        "workloads (as in Kueue, it is immutable)"
    ]
    assert LocalQueue.objects.get(pk=queue.pk).cluster_queue.name == "batch-cpu"


def test_given_local_queue_with_invalid_name_when_imported_then_metadata_name_is_blamed(cluster_v1beta2):
    text = (
        cluster_v1beta2
        + """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: Not_A_Name, namespace: data-eng}
spec: {clusterQueue: batch-cpu}
"""
    )
    assert errors_of(text) == [
        "document 17 (LocalQueue 'data-eng/Not_A_Name'): metadata.name: 'Not_A_Name' is not a valid name: use "
        "lower-case letters, digits and '-', start and end with a letter or digit, at most 63 characters"
    ]
    assert not LocalQueue.objects.exists()


def test_parser_enumerations_match_the_model_choices_and_parsing_needs_no_django():
    import subprocess
    import sys

    from queues.interop.kueue import specs
    from queues.models import (
        AdmissionMode,
        QueueingStrategy,
        ReclaimWithinCohort,
        StopPolicy,
        WithinClusterQueuePreemption,
    )

    assert tuple(AdmissionMode.values) == specs.ADMISSION_MODES
    assert tuple(QueueingStrategy.values) == specs.QUEUEING_STRATEGIES
    assert tuple(StopPolicy.values) == specs.STOP_POLICIES
    assert tuple(WithinClusterQueuePreemption.values) == specs.WITHIN_CLUSTER_QUEUE
    assert tuple(ReclaimWithinCohort.values) == specs.RECLAIM_WITHIN_COHORT
    code = (
        "import sys; from queues.interop.kueue.parse import parse_manifests; "
        "parsed = parse_manifests(open('tests/queues/interop/manifests/cluster-v1beta2.yaml').read()); "
        "assert len(parsed.objects) == 16 and not parsed.problems; assert 'django' not in sys.modules, 'django loaded'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={"PATH": "/usr/bin:/bin"})


def test_given_overflowing_quantity_and_weight_when_imported_then_each_is_a_field_error_not_a_crash():
    text = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-cpu}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: heavy}
spec:
  fairSharing: {weight: 1e999999}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: overflowing}
spec:
  resourceGroups:
    - coveredResources: [cpu]
      flavors:
        - name: default-cpu
          resources:
            - {name: cpu, nominalQuota: "1e999999"}
"""
    before = policy_rows()

    errors = errors_of(text)

    assert errors == [
        "document 2 (ClusterQueue 'heavy'): spec.fairSharing.weight: not a valid weight (a quantity such as 1, 0.5 "
        "or 500m): '1e999999' is out of range: an exponent has at most 3 digits",
        "document 3 (ClusterQueue 'overflowing'): spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: "
        "'1e999999' is out of range: an exponent has at most 3 digits",
    ]
    assert policy_rows() == before


def test_given_python_only_number_syntax_when_imported_then_refused_as_kubernetes_would():
    text = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-cpu}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: grouped-digits}
spec:
  resourceGroups:
    - coveredResources: [cpu]
      flavors:
        - name: default-cpu
          resources:
            - {name: cpu, nominalQuota: "１２"}
"""
    errors = errors_of(text)

    assert errors == [
        "document 2 (ClusterQueue 'grouped-digits'): spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: "
        "'１２' is not a valid Kubernetes quantity (e.g. 500m, 2Gi, 4)"
    ]
