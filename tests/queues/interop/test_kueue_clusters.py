"""Clusters in Kueue terms (issue 27): every Cluster a MultiKueueCluster labelled with its
backend, each flavor's cluster an annotation, a ClusterQueue over several clusters the MultiKueue
admission check fairportal derives. Export -> parse -> import gives the same clusters and flavor
membership; the dry run shows cluster changes; bad input names the field.

There is no Kubernetes API server here and the repository vendors no Kueue CRDs, so the shape is
checked against the fields of Kueue's Go types (apis/kueue/v1beta1|v1beta2/multikueue_types.go,
admissioncheck_types.go, clusterqueue_types.go) as the parser reads them: ``kueue_shape_problems``
below repeats those bounds for what export writes.
"""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from core.models import PolicyChange
from queues.interop.kueue import specs
from queues.interop.kueue.apply import import_manifests
from queues.interop.kueue.export import export_manifests
from queues.interop.kueue.parse import parse_manifests
from queues.interop.kueue.report import ImportFailed
from queues.models import Cluster, ClusterQueue, ClusterQueueQuota, Cohort, ResourceFlavor, default_cluster
from tests.queues.interop.conftest import manifest
from tests.queues.interop.test_kueue_roundtrip import delete_policy, equivalent_objects

pytestmark = pytest.mark.django_db

CLUSTERS = "clusters-v1beta2.yaml"
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


def kueue_shape_problems(document: dict, api_version: str) -> list[str]:
    """What Kueue's API (its Go types' required fields, enums and bounds) would refuse in one
    exported MultiKueue document; empty when it would accept it."""
    kind, spec, problems = document["kind"], document.get("spec", {}), []
    if kind == "MultiKueueCluster":
        holder = spec.get("kubeConfig") if api_version == "v1beta1" else spec.get("clusterSource", {}).get("kubeConfig")
        if not isinstance(holder, dict) or not 1 <= len(holder.get("location", "")) <= 256:
            problems.append("kubeConfig.location: required, 1-256 characters")
        elif holder.get("locationType", "Secret") not in ("Secret", "Path"):
            problems.append("kubeConfig.locationType: Secret or Path")
        if set(spec) != ({"kubeConfig"} if api_version == "v1beta1" else {"clusterSource"}):
            problems.append(f"spec: unexpected fields {sorted(spec)}")
    elif kind == "MultiKueueConfig":
        clusters = spec.get("clusters")
        if not isinstance(clusters, list) or not 1 <= len(clusters) <= 20 or len(set(clusters)) != len(clusters):
            problems.append("clusters: 1-20 unique names")
    elif kind == "AdmissionCheck":
        parameters = spec.get("parameters", {})
        if not 1 <= len(spec.get("controllerName", "")) <= 253:
            problems.append("controllerName: 1-253 characters")
        if parameters.get("apiGroup") != "kueue.x-k8s.io" or parameters.get("kind") != "MultiKueueConfig":
            problems.append("parameters: apiGroup kueue.x-k8s.io, kind MultiKueueConfig")
        if not DNS_LABEL.match(parameters.get("name", "")):
            problems.append("parameters.name: a DNS label of at most 63 characters")
    elif kind == "ClusterQueue" and "admissionChecksStrategy" in spec:
        rules = spec["admissionChecksStrategy"].get("admissionChecks")
        if not isinstance(rules, list) or not 1 <= len(rules) <= 64:
            problems.append("admissionChecksStrategy.admissionChecks: 1-64 rules")
        if api_version == "v1beta1" and "admissionChecks" in spec:
            problems.append("admissionChecks and admissionChecksStrategy together")
    for key in document.get("metadata", {}).get("labels", {}).values():
        if not isinstance(key, str) or len(key) > 63:
            problems.append("a label value of at most 63 characters")
    return problems


def by_kind(text: str) -> dict[str, list[dict]]:
    kinds: dict[str, list[dict]] = {}
    for document in yaml.safe_load_all(text):
        kinds.setdefault(document["kind"], []).append(document)
    return kinds


def cluster_state() -> dict[str, dict]:
    """Every cluster's modelled fields and its flavors (what a round trip must keep)."""
    fields = ("backend", "from_settings", "enabled", "description", "slurm_transport", "slurm_bin_dir")
    fields += ("slurm_conf", "rest_url", "rest_secret", "rest_user", "flavor_partitions", "account_queues")
    return {
        cluster.name: {
            **{field: getattr(cluster, field) for field in fields},
            "flavors": sorted(cluster.flavors.values_list("name", flat=True)),
        }
        for cluster in Cluster.objects.order_by("name")
    }


def test_given_the_clusters_manifest_when_imported_then_clusters_connections_and_flavors_are_stored():
    report = import_manifests(manifest(CLUSTERS), dry_run=False)

    assert report.ok
    a, b = Cluster.objects.get(name="slurm-a"), Cluster.objects.get(name="slurm-b")
    assert (a.backend, a.slurm_transport, a.slurm_bin_dir, a.slurm_conf) == (
        "slurm",
        "cli",
        "/opt/slurm-22.05/bin",
        "/etc/slurm-a/slurm.conf",
    )
    assert a.flavor_partitions == {"gpu-a": "gpu"} and a.description == "the old machine, Slurm 22.05"
    assert (b.slurm_transport, b.rest_url, b.rest_secret, b.rest_user, b.enabled) == (
        "rest",
        "http://127.0.0.1:6820",
        "env:SLURM_B_JWT",
        "fairportal",
        False,
    )
    assert b.account_queues == {"physics": "team-physics/main"}
    assert {flavor.name: flavor.cluster.name for flavor in ResourceFlavor.objects.select_related("cluster")} == {
        "cpu": default_cluster().name,
        "gpu-a": "slurm-a",
        "gpu-b": "slurm-b",
    }
    assert default_cluster().backend == ""  # the default cluster keeps taking its backend from the settings
    derived = [(r.kind, r.name) for r in report.objects if r.action == "derived"]
    assert derived == [
        ("MultiKueueConfig", "fairportal-slurm-a-slurm-b"),
        ("AdmissionCheck", "fairportal-slurm-a-slurm-b"),
    ]
    # The derived check is not kept as an unknown field: export writes it from the flavors' clusters.
    assert "spec.admissionChecksStrategy" not in ClusterQueue.objects.get(name="gpu").kueue_extra
    assert PolicyChange.objects.filter(note__contains="MultiKueueCluster").count() == 2  # slurm-a, slurm-b created


@pytest.mark.parametrize("api_version", ["v1beta1", "v1beta2"])
def test_given_imported_clusters_when_exported_then_the_export_describes_the_file_and_imports_unchanged(api_version):
    import_manifests(manifest(CLUSTERS), dry_run=False)

    exported = export_manifests(api_version)

    assert exported.warnings == []
    text = exported.to_yaml()
    assert equivalent_objects(text) == equivalent_objects(manifest(CLUSTERS))
    again = import_manifests(text, dry_run=True)
    assert again.ok
    assert {(r.kind, r.action) for r in again.objects} == {
        ("MultiKueueCluster", "unchanged"),
        ("ResourceFlavor", "unchanged"),
        ("ClusterQueue", "unchanged"),
        ("LocalQueue", "unchanged"),
        ("MultiKueueConfig", "derived"),
        ("AdmissionCheck", "derived"),
    }


@pytest.mark.parametrize("api_version", ["v1beta1", "v1beta2"])
def test_given_clusters_made_in_the_database_when_exported_deleted_and_imported_then_they_come_back(api_version):
    Cluster.objects.create(
        name="east", backend="slurm", slurm_bin_dir="/opt/slurm/bin", flavor_partitions={"east-gpu": "gpu"}
    )
    Cluster.objects.create(
        name="west",
        backend="slurm",
        slurm_transport="rest",
        rest_url="https://slurm-west.example.org:6820/",
        rest_secret="file:/etc/fairportal/west.jwt",
        rest_user="svc",
        description="cloud burst",
    )
    Cluster.objects.create(name="sim", backend="simulated", enabled=False)
    east_gpu = ResourceFlavor.objects.create(name="east-gpu", cluster=Cluster.objects.get(name="east"))
    west_gpu = ResourceFlavor.objects.create(name="west-gpu", cluster=Cluster.objects.get(name="west"))
    ResourceFlavor.objects.create(name="sim-cpu", cluster=Cluster.objects.get(name="sim"))
    queue = ClusterQueue.objects.create(name="gpu")
    for order, flavor in enumerate((west_gpu, east_gpu)):  # west first: the MultiKueueConfig lists it first
        ClusterQueueQuota.objects.create(
            cluster_queue=queue, flavor=flavor, resource="nvidia.com/gpu", nominal=4000, flavor_order=order
        )
    before = cluster_state()

    text = export_manifests(api_version).to_yaml()
    delete_policy()
    Cluster.objects.filter(from_settings=False).delete()
    import_manifests(text, dry_run=False)

    assert cluster_state() == before
    documents = by_kind(text)
    assert documents["MultiKueueConfig"][0]["spec"]["clusters"] == ["west", "east"]
    assert documents["ClusterQueue"][0]["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "fairportal-west-east"}]
    }
    for kind in ("MultiKueueCluster", "MultiKueueConfig", "AdmissionCheck", "ClusterQueue"):
        for document in documents[kind]:
            assert kueue_shape_problems(document, api_version) == [], document


def test_given_the_export_then_clusters_are_labelled_and_secrets_are_references_only():
    import_manifests(manifest(CLUSTERS), dry_run=False)

    documents = by_kind(export_manifests("v1beta1").to_yaml())

    slurm_b = next(d for d in documents["MultiKueueCluster"] if d["metadata"]["name"] == "slurm-b")
    assert slurm_b["metadata"]["labels"] == {"fairportal.io/backend": "slurm"}
    assert slurm_b["metadata"]["annotations"]["fairportal.io/rest-secret"] == "env:SLURM_B_JWT"
    assert slurm_b["spec"] == {"kubeConfig": {"locationType": "Secret", "location": "slurm-b-kubeconfig"}}
    default = next(d for d in documents["MultiKueueCluster"] if d["metadata"]["name"] == default_cluster().name)
    assert default["metadata"]["annotations"] == {"fairportal.io/from-settings": "true"}
    assert default["metadata"]["labels"] == {"fairportal.io/backend": "simulated"}  # CLUSTER_BACKEND here
    # The cluster is an annotation, never a nodeLabel: Kueue would put nodeLabels in the pods' nodeSelector.
    gpu_a = next(d for d in documents["ResourceFlavor"] if d["metadata"]["name"] == "gpu-a")
    assert gpu_a["metadata"]["annotations"] == {"fairportal.io/cluster": "slurm-a"}
    assert gpu_a["spec"] == {"nodeLabels": {"cloud.provider.com/accelerator": "a100"}}
    batch = next(d for d in documents["ClusterQueue"] if d["metadata"]["name"] == "batch")
    assert "admissionChecksStrategy" not in batch["spec"]  # one cluster: no MultiKueue check


def test_given_three_clusters_then_export_uses_the_same_fixed_number_of_queries(django_assert_num_queries):
    import_manifests(manifest(CLUSTERS), dry_run=False)
    Cluster.objects.create(name="fourth", backend="external")
    Cohort.objects.create(name="org")  # so the cohorts' quota rows are read too

    with django_assert_num_queries(8):  # as test_kueue_roundtrip's single-cluster export
        export_manifests()


def test_given_only_the_default_cluster_then_the_export_has_no_multikueue_documents():
    ResourceFlavor.objects.create(name="a100")

    documents = by_kind(export_manifests().to_yaml())

    assert set(documents) == {"ResourceFlavor"}
    assert "annotations" not in documents["ResourceFlavor"][0]["metadata"]


def test_given_an_edited_export_when_dry_run_then_cluster_changes_are_shown_and_nothing_is_saved():
    import_manifests(manifest(CLUSTERS), dry_run=False)
    text = export_manifests().to_yaml()
    text = text.replace("http://127.0.0.1:6820", "http://127.0.0.1:6821")
    text = text.replace("fairportal.io/cluster: slurm-b", "fairportal.io/cluster: slurm-a")

    report = import_manifests(text, dry_run=True)

    lines = report.lines()
    assert "updated   MultiKueueCluster slurm-b" in lines
    assert "    rest_url: http://127.0.0.1:6820 -> http://127.0.0.1:6821" in lines
    assert "updated   ResourceFlavor gpu-b" in lines
    assert "    cluster: slurm-b -> slurm-a" in lines
    assert "derived   MultiKueueConfig fairportal-slurm-a-slurm-b" in lines
    assert Cluster.objects.get(name="slurm-b").rest_url == "http://127.0.0.1:6820"
    assert ResourceFlavor.objects.get(name="gpu-b").cluster.name == "slurm-b"


def problems_of(text: str) -> list[str]:
    with pytest.raises(ImportFailed) as failure:
        import_manifests(text, dry_run=True)
    return [str(problem) for problem in failure.value.report.problems]


def cluster_document(annotations: str = "", labels: str = "{fairportal.io/backend: slurm}", spec: str = "") -> str:
    spec = spec or "spec: {clusterSource: {kubeConfig: {location: x-kubeconfig}}}"
    return (
        f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: MultiKueueCluster\n"
        f"metadata: {{name: x, labels: {labels}, annotations: {{{annotations}}}}}\n{spec}\n"
    )


@pytest.mark.parametrize(
    ("annotations", "labels", "spec", "expected"),
    [
        (
            "",
            "{fairportal.io/backend: lsf}",
            "",
            "metadata.labels[fairportal.io/backend]: must be one of simulated, external, slurm, got 'lsf'",
        ),
        (
            "fairportal.io/rest-secret: eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXRva2Vu",
            "{fairportal.io/backend: slurm}",
            "",
            "metadata.annotations[fairportal.io/rest-secret]: expected env:VARIABLE_NAME or file:/absolute/path "
            "(where the token is; never the token itself)",
        ),
        (
            "fairportal.io/slurm-conf: etc/slurm.conf",
            "{fairportal.io/backend: slurm}",
            "",
            "metadata.annotations[fairportal.io/slurm-conf]: expected an absolute path (starting with /)",
        ),
        (
            "fairportal.io/flavor-partitions: 'not json'",
            "{fairportal.io/backend: slurm}",
            "",
            "metadata.annotations[fairportal.io/flavor-partitions]: expected a JSON object of name -> value",
        ),
        (
            'fairportal.io/flavor-partitions: \'{"GPU": "gpu"}\'',
            "{fairportal.io/backend: slurm}",
            "",
            "metadata.annotations[fairportal.io/flavor-partitions]: flavor_partitions: 'GPU' is not a valid label name",
        ),
        (
            'fairportal.io/enabled: "no"',
            "{fairportal.io/backend: slurm}",
            "",
            'metadata.annotations[fairportal.io/enabled]: expected "true" or "false", got \'no\'',
        ),
        (
            "",
            "{fairportal.io/backend: slurm}",
            "spec: {kubeConfig: {location: x-kubeconfig}}",
            "spec.kubeConfig: is the v1beta1 name; kueue.x-k8s.io/v1beta2 writes spec.clusterSource.kubeConfig",
        ),
        (
            "",
            "{fairportal.io/backend: slurm}",
            "spec: {clusterSource: {}}",
            "spec.clusterSource.kubeConfig: required (Kueue needs it; fairportal writes a Secret <cluster>-kubeconfig)",
        ),
        (
            "",
            "{fairportal.io/backend: slurm}",
            "spec: {clusterSource: {kubeConfig: {location: x, locationType: Inline}}}",
            "spec.clusterSource.kubeConfig.locationType: must be one of Secret, Path, got 'Inline'",
        ),
        (
            "",
            "{fairportal.io/backend: slurm}",
            "spec: {clusterSource: {clusterProfileRef: {name: p}, kubeConfig: {location: x}}}",
            "spec.clusterSource.clusterProfileRef: is not modelled: fairportal keeps no other field of a "
            "MultiKueueCluster (a Cluster has no place for it)",
        ),
        (
            "team: ml",
            "{fairportal.io/backend: slurm}",
            "",
            "metadata.annotations: is not modelled: fairportal keeps no other field of a MultiKueueCluster "
            "(a Cluster has no place for it)",
        ),
    ],
)
def test_given_a_bad_cluster_document_then_the_error_names_the_field(annotations, labels, spec, expected):
    problems = problems_of(cluster_document(annotations, labels, spec))

    assert len(problems) == 1
    assert problems[0].startswith(f"document 1 (MultiKueueCluster 'x'): {expected}")
    assert "c2VjcmV0LXRva2Vu" not in problems[0]  # the token is never echoed
    assert not Cluster.objects.filter(name="x").exists()


def test_given_a_huge_map_annotation_then_it_is_refused_without_being_echoed():
    huge = '{"a": "' + "p" * 70_000 + '"}'
    problems = problems_of(cluster_document(f"fairportal.io/flavor-partitions: '{huge}'"))

    assert problems == [
        "document 1 (MultiKueueCluster 'x'): metadata.annotations[fairportal.io/flavor-partitions]: "
        "at most 65536 characters of JSON, got 70009"
    ]


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        ("[" * 30_000 + "]" * 30_000, "expected a JSON object of name -> value"),
        ("[1, 2]", "flavor_partitions: expected an object of name -> value"),
    ],
)
def test_given_a_map_annotation_that_is_not_a_flat_object_then_it_is_an_error_not_a_crash(annotation, expected):
    problems = problems_of(cluster_document(f"fairportal.io/flavor-partitions: '{annotation}'"))

    assert len(problems) == 1
    assert problems[0].startswith(
        f"document 1 (MultiKueueCluster 'x'): metadata.annotations[fairportal.io/flavor-partitions]: {expected}"
    )


def test_given_a_derived_rule_with_odd_keys_then_the_field_is_named():
    text = manifest(CLUSTERS).replace(
        "      - name: fairportal-slurm-a-slurm-b\n", "      - {name: fairportal-slurm-a-slurm-b, 1: a, b: c}\n"
    )

    assert problems_of(text) == [
        "document 9 (ClusterQueue 'gpu'): spec.admissionChecksStrategy.admissionChecks[0].1: is not a field of an "
        "admission check rule"
    ]


def test_given_a_kubernetes_worker_cluster_then_it_is_unsupported_unless_skipped():
    worker = cluster_document(labels="{}")

    assert problems_of(worker) == [
        "document 1 (MultiKueueCluster 'x'): metadata.labels[fairportal.io/backend]: required: a MultiKueueCluster "
        "without it is a Kubernetes worker cluster, which fairportal cannot drive yet (give the backend, simulated, "
        "external or slurm, for one of fairportal's clusters); --skip-unsupported skips such documents"
    ]
    assert [str(skipped) for skipped in parse_manifests(worker, skip_unsupported=True).skipped] == [
        "document 1: MultiKueueCluster x (kueue.x-k8s.io/v1beta2)"
    ]


def test_given_bad_references_between_clusters_flavors_and_checks_then_each_names_its_field():
    text = manifest(CLUSTERS)
    text = text.replace("fairportal.io/cluster: slurm-b", "fairportal.io/cluster: slurm-c")
    text = text.replace("clusters: [slurm-a, slurm-b]", "clusters: [slurm-a, slurm-z]")

    problems = problems_of(text)

    assert problems == [
        "document 6 (ResourceFlavor 'gpu-b'): metadata.annotations[fairportal.io/cluster]: MultiKueueCluster "
        "'slurm-c' is neither in the file nor stored",
        "document 9 (ClusterQueue 'gpu'): spec.resourceGroups[0].flavors[1].name: ResourceFlavor 'gpu-b' could "
        "not be imported (see document 6)",
        "document 11 (LocalQueue 'team-physics/main'): spec.clusterQueue: ClusterQueue 'gpu' could not be imported "
        "(see document 9)",
        "document 7 (MultiKueueConfig 'fairportal-slurm-a-slurm-b'): spec.clusters[1]: MultiKueueCluster 'slurm-z' "
        "is neither in the file nor stored",
    ]


def test_given_a_check_that_misses_a_cluster_of_the_flavors_then_the_rule_is_refused():
    text = manifest(CLUSTERS).replace("clusters: [slurm-a, slurm-b]", "clusters: [slurm-a, default]")

    assert problems_of(text) == [
        "document 9 (ClusterQueue 'gpu'): spec.admissionChecksStrategy.admissionChecks[0].name: AdmissionCheck "
        "fairportal-slurm-a-slurm-b dispatches to slurm-a, default but flavors of this ClusterQueue are on slurm-b "
        "(the flavor's fairportal.io/cluster decides)"
    ]


def test_given_a_multikueue_check_per_flavor_then_it_is_refused_as_kueue_does():
    text = manifest(CLUSTERS).replace(
        "      - name: fairportal-slurm-a-slurm-b\n",
        "      - name: fairportal-slurm-a-slurm-b\n        onFlavors: [gpu-a]\n",
    )

    assert problems_of(text) == [
        "document 9 (ClusterQueue 'gpu'): spec.admissionChecksStrategy.admissionChecks[0].onFlavors: a MultiKueue "
        "check applies to every flavor of the ClusterQueue (Kueue refuses it per flavor)"
    ]


def test_given_a_flavor_moved_so_a_queue_would_place_one_workload_on_two_clusters_then_it_is_refused():
    import_manifests(manifest(CLUSTERS), dry_run=False)
    gpu = ClusterQueue.objects.get(name="gpu")
    ClusterQueueQuota.objects.create(
        cluster_queue=gpu, flavor=ResourceFlavor.objects.get(name="cpu"), resource="memory", nominal=10, flavor_order=2
    )
    moved = (
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
        "metadata: {name: gpu-b, annotations: {fairportal.io/cluster: default}}\n"
    )

    (problem,) = problems_of(moved)

    assert problem.startswith(
        "document 1 (ResourceFlavor 'gpu-b'): metadata.annotations[fairportal.io/cluster]: ClusterQueue gpu: flavors "
        "of different clusters in more than one resource group"
    )
    assert ResourceFlavor.objects.get(name="gpu-b").cluster.name == "slurm-b"


def test_given_the_default_cluster_under_another_name_then_the_from_settings_annotation_is_refused():
    text = manifest(CLUSTERS).replace("name: default\n  labels", "name: main\n  labels", 1)

    problems = problems_of(text)

    assert problems[0] == (
        "document 1 (MultiKueueCluster 'main'): metadata.annotations[fairportal.io/from-settings]: this "
        f"installation's default cluster is {default_cluster().name!r}, not 'main'"
    )


def test_given_the_commands_then_export_and_import_carry_the_clusters(tmp_path, monkeypatch):
    """``manage.py kueue_export`` / ``kueue_import`` (bin/fairportal has no Kueue verbs): the
    clusters travel with the rest, and a dry run of an edit shows the cluster's change."""
    import_manifests(manifest(CLUSTERS), dry_run=False)
    monkeypatch.chdir(tmp_path)
    call_command("kueue_export", "--api-version", "v1beta1", "-o", "exported.yaml", stdout=StringIO())
    exported = Path("exported.yaml").read_text(encoding="utf-8")
    assert len(by_kind(exported)["MultiKueueCluster"]) == 3
    Path("edited.yaml").write_text(exported.replace("/opt/slurm-22.05/bin", "/opt/slurm-24.11/bin"), encoding="utf-8")

    out = StringIO()
    call_command("kueue_import", "edited.yaml", "--dry-run", stdout=out, stderr=StringIO())

    assert "    slurm_bin_dir: /opt/slurm-22.05/bin -> /opt/slurm-24.11/bin" in out.getvalue().splitlines()
    assert Cluster.objects.get(name="slurm-a").slurm_bin_dir == "/opt/slurm-22.05/bin"


def test_given_specs_then_derived_names_are_dns_labels_whatever_the_cluster_names():
    short = specs.multikueue_name(("a", "b"))
    long = specs.multikueue_name(tuple(f"cluster-{index:02d}-" + "x" * 40 for index in range(3)))

    assert short == "fairportal-a-b"
    assert DNS_LABEL.match(long) and long.startswith("fairportal-") and len(long) <= 63


def test_given_docs_kueue_md_then_its_cluster_example_is_what_export_writes():
    """docs/kueue.md's YAML example is export output, document for document, and parses."""
    doc = (Path(__file__).resolve().parents[3] / "docs" / "kueue.md").read_text(encoding="utf-8")
    (example,) = re.findall(r"```yaml\n(.*?)```", doc, re.S)
    import_manifests(manifest(CLUSTERS), dry_run=False)
    Cluster.objects.filter(name="slurm-b").update(account_queues={}, enabled=True)

    exported = {
        (document["kind"], document["metadata"]["name"]): document
        for document in yaml.safe_load_all(export_manifests("v1beta2").to_yaml())
    }

    shown = list(yaml.safe_load_all(example))
    assert [document["kind"] for document in shown] == ["MultiKueueCluster", "ResourceFlavor", "AdmissionCheck"]
    for document in shown:
        assert exported[(document["kind"], document["metadata"]["name"])] == document
    assert not parse_manifests(example).problems


def test_given_two_multikueue_checks_on_a_queue_then_the_second_is_refused_as_kueue_does():
    text = manifest(CLUSTERS).replace(
        "      - name: fairportal-slurm-a-slurm-b\n",
        "      - name: fairportal-slurm-a-slurm-b\n      - name: fairportal-x\n",
    )

    assert problems_of(text) == [
        "document 9 (ClusterQueue 'gpu'): spec.admissionChecksStrategy.admissionChecks[1].name: a ClusterQueue has at "
        "most one MultiKueue check (as in Kueue)"
    ]


def test_given_a_check_whose_config_is_not_in_the_file_then_its_parameters_name_is_refused():
    text = manifest(CLUSTERS).replace(
        "kind: MultiKueueConfig, name: fairportal-slurm-a-slurm-b}", "kind: MultiKueueConfig, name: elsewhere}"
    )

    assert problems_of(text) == [
        "document 8 (AdmissionCheck 'fairportal-slurm-a-slurm-b'): spec.parameters.name: MultiKueueConfig "
        "'elsewhere' is not in the file (fairportal does not store them)"
    ]
