"""Round trip: what is imported and exported again describes the same objects, in both API
versions, and re-importing an export changes nothing."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from queues.interop.kueue.apply import import_manifests
from queues.interop.kueue.export import export_manifests
from queues.interop.kueue.parse import parse_manifests
from queues.models import ClusterQueue, Cohort, LocalQueue, Namespace, ResourceFlavor, WorkloadPriorityClass

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

    with django_assert_num_queries(7):
        export_manifests()
