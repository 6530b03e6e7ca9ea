"""Round trip: what is imported and exported again describes the same objects, in both API
versions, and re-importing an export changes nothing."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from queues.interop.kueue.apply import import_manifests
from queues.interop.kueue.export import export_manifests
from queues.interop.kueue.parse import parse_manifests
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

_NOT_COMPARED = {"index", "api_version", "notes", "fields", "path", "notation"}  # notation: test_notation_*


def equivalent_objects(text: str) -> dict[tuple[str, str], dict]:
    """The parsed objects of ``text`` without positions and spellings, quota rows as a set."""
    parsed = parse_manifests(text)
    assert not parsed.problems, parsed.problems
    objects = {}
    for spec in parsed.objects:
        data = {k: v for k, v in dataclasses.asdict(spec).items() if k not in _NOT_COMPARED}
        if "quotas" in data:
            data["quotas"] = sorted(
                (tuple(sorted((k, v) for k, v in quota.items() if k not in _NOT_COMPARED)) for quota in data["quotas"]),
                key=repr,
            )
        objects[(spec.kind, spec.key)] = data
    return objects


def delete_policy() -> None:
    LocalQueue.objects.all().delete()
    Namespace.objects.all().delete()
    ClusterQueue.objects.all().delete()
    for cohort in Cohort.objects.order_by("-parent_id"):  # children before parents (PROTECT)
        Cohort.objects.filter(parent=cohort).update(parent=None)
    Cohort.objects.all().delete()
    ResourceFlavor.objects.all().delete()
    WorkloadPriorityClass.objects.all().delete()


@pytest.mark.parametrize("api_version", ["v1beta1", "v1beta2"])
def test_given_imported_cluster_when_exported_then_objects_are_equivalent_to_the_file(cluster_v1beta2, api_version):
    import_manifests(cluster_v1beta2, dry_run=False)

    exported = export_manifests(api_version).to_yaml()

    assert equivalent_objects(exported) == equivalent_objects(cluster_v1beta2)
    kinds = [doc["kind"] for doc in yaml.safe_load_all(exported)]
    assert kinds.count("ClusterQueue") == 3 and kinds.count("LocalQueue") == 5


@pytest.mark.parametrize("api_version", ["v1beta1", "v1beta2"])
def test_given_export_when_imported_again_then_every_object_is_unchanged(cluster_v1beta2, api_version):
    import_manifests(cluster_v1beta2, dry_run=False)
    exported = export_manifests(api_version).to_yaml()

    report = import_manifests(exported, dry_run=True)

    assert report.ok and len(report.objects) == 16
    assert {r.action for r in report.objects} == {"unchanged"}


def test_given_v1beta1_export_then_version_specific_field_names_are_used(cluster_v1beta2):
    import_manifests(cluster_v1beta2, dry_run=False)

    documents = {
        (d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(export_manifests("v1beta1").to_yaml())
    }

    assert documents[("Cohort", "research")]["spec"]["parent"] == "org"
    assert documents[("ClusterQueue", "batch-cpu")]["spec"]["cohort"] == "platform"
    assert all(d["apiVersion"] == "kueue.x-k8s.io/v1beta1" for d in documents.values())


def test_given_export_when_loaded_into_an_empty_database_then_exporting_again_gives_the_same_text(cluster_v1beta2):
    import_manifests(cluster_v1beta2, dry_run=False)
    first = export_manifests().to_yaml()
    delete_policy()

    import_manifests(first, dry_run=False)

    assert export_manifests().to_yaml() == first


def test_given_kept_fields_when_exported_then_they_are_back_at_their_paths(cluster_v1beta2):
    import_manifests(cluster_v1beta2, dry_run=False)

    documents = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(export_manifests().to_yaml())}

    training = documents[("ClusterQueue", "gpu-training")]["spec"]
    assert training["flavorFungibility"] == {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"}
    assert training["preemption"] == {
        "withinClusterQueue": "LowerPriority",
        "reclaimWithinCohort": "Any",
        "borrowWithinCohort": {"policy": "Never"},
    }
    assert training["namespaceSelector"] == {}
    assert documents[("ClusterQueue", "gpu-inference")]["spec"]["namespaceSelector"] == {
        "matchLabels": {"example.com/inference": "true"}
    }
    assert documents[("ResourceFlavor", "default-cpu")]["metadata"]["labels"] == {"team.example.com/owner": "platform"}
    assert documents[("LocalQueue", "training")]["metadata"]["namespace"] in {"team-language", "team-vision"}


def test_given_demo_cluster_when_exported_and_reimported_then_nothing_changes(demo):
    exported = export_manifests()

    report = import_manifests(exported.to_yaml(), dry_run=True)

    assert report.ok and {r.action for r in report.objects} == {"unchanged"}
    assert len([r for r in report.objects if r.kind == "LocalQueue"]) == LocalQueue.objects.count()
    modes = " ".join(exported.warnings)
    assert "DominantResourceShare is a fairportal extension" in modes and "TimeAware is a fairportal extension" in modes


def test_given_any_cluster_size_then_export_uses_a_fixed_number_of_queries(cluster_v1beta2, django_assert_num_queries):
    import_manifests(cluster_v1beta2, dry_run=False)

    # 8: flavors, priority classes, cohorts and their quotas, ClusterQueues and their quotas (with
    # the flavors' clusters), LocalQueues, and the clusters (exported as MultiKueueClusters when
    # there is more than the default one; test_kueue_clusters counts the same with three).
    with django_assert_num_queries(8):
        export_manifests()


# -- notation: every quantity is exported as it was written ---------------------------------

# (file, import options, a file imported first for the objects it refers to)
NOTATION_MANIFESTS = [
    ("notation.yaml", {}, None),
    ("cluster-v1beta2.yaml", {}, None),
    ("cluster-v1beta1.yaml", {}, None),
    ("kubectl-get-v1beta1.yaml", {}, "cluster-v1beta2.yaml"),
    ("kueue-examples-mixed.yaml", {"skip_unsupported": True, "namespace": "team-a"}, None),
]


def written_quantities(text: str, **options) -> dict[tuple[str, str, str], str]:
    """Every quantity the manifests write, as text: (kind, object, path) -> text."""
    parsed = parse_manifests(text, **options)
    assert not parsed.problems, parsed.problems
    return {(spec.kind, spec.key, key): value for spec in parsed.objects for key, value in spec.notation.items()}


def stored_rows() -> dict[str, list]:
    return {
        "cluster_queue_quotas": sorted(
            ClusterQueueQuota.objects.values_list(
                "cluster_queue__name", "flavor__name", "resource", "nominal", "borrowing_limit", "lending_limit"
            )
        ),
        "cohort_quotas": sorted(
            CohortQuota.objects.values_list(
                "cohort__name", "flavor__name", "resource", "nominal", "borrowing_limit", "lending_limit"
            )
        ),
        "weights": sorted(
            [("Cohort", n, w) for n, w in Cohort.objects.values_list("name", "weight")]
            + [("ClusterQueue", n, w) for n, w in ClusterQueue.objects.values_list("name", "weight")]
            + [("LocalQueue", n, w) for n, w in LocalQueue.objects.values_list("name", "weight")]
        ),
    }


@pytest.mark.parametrize("name,options,base", NOTATION_MANIFESTS, ids=[name for name, _, _ in NOTATION_MANIFESTS])
def test_notation_given_manifest_when_imported_exported_and_imported_again_then_rows_and_texts_are_identical(
    name, options, base
):
    if base:
        import_manifests(manifest(base), dry_run=False)
    text = manifest(name)
    written = written_quantities(text, **options)
    import_manifests(text, dry_run=False, **options)
    rows = stored_rows()

    exported = export_manifests().to_yaml()
    delete_policy()
    import_manifests(exported, dry_run=False)

    assert stored_rows() == rows
    again = written_quantities(export_manifests().to_yaml())
    assert {key: again.get(key) for key in written} == written
    assert written  # the manifest has quantities to compare


def test_notation_given_binary_suffix_on_a_non_memory_resource_then_export_keeps_it():
    import_manifests(manifest("notation.yaml"), dry_run=False)

    documents = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(export_manifests().to_yaml())}

    resources = {
        r["name"]: r
        for r in documents[("ClusterQueue", "notation")]["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    }
    assert resources["example.com/gpu.memory"] == {
        "name": "example.com/gpu.memory",
        "nominalQuota": "800Gi",
        "borrowingLimit": "64Gi",
        "lendingLimit": "1e3",
    }
    assert resources["memory"]["nominalQuota"] == "10G" and resources["memory"]["lendingLimit"] == "1024Mi"
    assert resources["cpu"] == {"name": "cpu", "nominalQuota": "500m", "borrowingLimit": "2000m"}
    assert resources["nvidia.com/gpu"]["borrowingLimit"] == "0.5"
    assert documents[("Cohort", "accel")]["spec"]["fairSharing"]["weight"] == "500m"
    assert documents[("LocalQueue", "main")]["spec"]["fairSharing"]["weight"] == "250m"


def test_notation_given_quota_edited_elsewhere_then_export_writes_the_new_amount_not_the_stale_text():
    import_manifests(manifest("notation.yaml"), dry_run=False)
    ClusterQueueQuota.objects.filter(resource="example.com/gpu.memory").update(nominal=900 * 2**30 * 1000)
    ClusterQueueQuota.objects.filter(resource="nvidia.com/gpu").update(nominal=6000)

    documents = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(export_manifests().to_yaml())}

    resources = {
        r["name"]: r
        for r in documents[("ClusterQueue", "notation")]["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    }
    assert resources["example.com/gpu.memory"]["nominalQuota"] == "900Gi"  # no stored text: shortest exact form
    assert resources["nvidia.com/gpu"]["nominalQuota"] == "6"


def test_notation_given_only_the_notation_changes_when_imported_then_the_diff_shows_it():
    import_manifests(manifest("notation.yaml"), dry_run=False)

    report = import_manifests(
        manifest("notation.yaml").replace("nominalQuota: 800Gi", "nominalQuota: 858993459200"), dry_run=True
    )

    queue = next(r for r in report.objects if r.kind == "ClusterQueue")
    assert queue.action == "updated"
    assert [str(c) for c in queue.changes] == [
        "notation.quotas[h100/example.com/gpu.memory].nominal: 800Gi -> 858993459200"
    ]
