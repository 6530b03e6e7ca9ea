"""Import safety: a manifest that omits a cohort's parent or a flavor's quota is previewed as a
deletion or re-parenting, with the admitted work that depends on it; applying it then needs an
explicit confirmation (``confirmDisruptive`` in the API, ``--confirm-disruptive`` in the
command), and a refused import saves nothing. Workloads are admitted by the real admission pass.
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from core.models import PolicyChange
from queues import services
from queues.admission import load as units
from queues.admission import passes as admission
from queues.interop.kueue.apply import import_manifests
from queues.interop.kueue.report import ImportRefused
from queues.models import ClusterQueue, ClusterQueueQuota, Cohort, CohortQuota, LocalQueue, Workload, WorkloadState
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

IMPORT = "/api/v1/kueue/import"

# research without parentName and without resourceGroups: detached from org, its quota deleted.
RESEARCH_DETACHED = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata:
  name: research
spec:
  fairSharing:
    weight: "2"
"""

# gpu-training without its a100 flavor (and without borrowing GPUs from research).
TRAINING_WITHOUT_A100 = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: gpu-training
spec:
  cohortName: research
  flavorFungibility:
    whenCanBorrow: TryNextFlavor
    whenCanPreempt: TryNextFlavor
  preemption:
    withinClusterQueue: LowerPriority
    reclaimWithinCohort: Any
    borrowWithinCohort:
      policy: Never
  fairSharing:
    weight: "2"
  admissionScope:
    admissionMode: UsageBasedAdmissionFairSharing
  resourceGroups:
    - coveredResources: [cpu, memory]
      flavors:
        - name: default-cpu
          resources:
            - name: cpu
              nominalQuota: 128
              borrowingLimit: 64
            - name: memory
              nominalQuota: 1Ti
              borrowingLimit: 512Gi
    - coveredResources: [nvidia.com/gpu]
      flavors:
        - name: spot-gpu
          resources:
            - name: nvidia.com/gpu
              nominalQuota: 8
"""

# batch-cpu moves from platform to research: nothing it has is borrowed, it borrows nothing.
BATCH_MOVED = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: batch-cpu
spec:
  cohortName: research
  fairSharing:
    weight: "0.5"
  resourceGroups:
    - coveredResources: [cpu, memory]
      flavors:
        - name: default-cpu
          resources:
            - name: cpu
              nominalQuota: 250m
              lendingLimit: 100m
            - name: memory
              nominalQuota: 512Mi
"""


@pytest.fixture
def borrowing(cluster_v1beta2):
    """gpu-training (a100: 16 GPUs nominal) runs a 20-GPU workload: it borrows 4 through research."""
    import_manifests(cluster_v1beta2, dry_run=False)
    vision = LocalQueue.objects.get(namespace__name="team-vision", name="training")
    services.submit_workload(
        local_queue=vision, name="big", pod_sets=[{"count": 20, "requests": {"nvidia.com/gpu": "1"}}]
    )
    queue = ClusterQueue.objects.get(name="gpu-training")
    admission.run_admission_pass(units.unit_for_cluster_queue(queue.id).key)
    workload = Workload.objects.get(name="big")
    assert workload.state == WorkloadState.ADMITTED and workload.flavor_assignment == {"nvidia.com/gpu": "a100"}
    return workload


ALL = RESEARCH_DETACHED + "---\n" + TRAINING_WITHOUT_A100 + "---\n" + BATCH_MOVED


def stored_policy() -> tuple:
    """Everything the imports below could change, and the audit trail."""
    return (
        sorted(Cohort.objects.values_list("name", "parent__name", "weight")),
        sorted(ClusterQueue.objects.values_list("name", "cohort__name")),
        sorted(CohortQuota.objects.values_list("cohort__name", "flavor__name", "resource", "nominal", "lending_limit")),
        sorted(
            ClusterQueueQuota.objects.values_list(
                "cluster_queue__name", "flavor__name", "resource", "nominal", "borrowing_limit", "flavor_order"
            )
        ),
        PolicyChange.objects.count(),
    )


def listed(disruptions) -> list[tuple]:
    return [(d["action"], d["kind"], d["name"], d["what"], d["admittedWorkDependsOnIt"]) for d in disruptions]


EXPECTED = [
    ("reparent", "Cohort", "research", "parent org -> (none)", True),
    ("delete", "Cohort", "research", "flavor a100 (all its quota)", True),
    ("delete", "Cohort", "research", "quota a100/nvidia.com/gpu (nominal 8)", True),
    ("delete", "ClusterQueue", "gpu-training", "flavor a100 (all its quota)", True),
    ("delete", "ClusterQueue", "gpu-training", "quota a100/nvidia.com/gpu (nominal 16)", True),
    ("reparent", "ClusterQueue", "batch-cpu", "cohort platform -> research", False),
]


# -- the import itself -------------------------------------------------------------------------


def test_given_borrowing_work_when_dry_run_then_every_deletion_and_reparenting_is_listed_with_its_dependents(
    borrowing,
):
    before = stored_policy()

    report = import_manifests(ALL, dry_run=True)

    assert listed(report.as_dict()["disruptions"]) == EXPECTED
    by_what = {(d.name, d.what): d.dependents for d in report.disruptions}
    assert by_what[("research", "parent org -> (none)")] == [
        "ClusterQueue gpu-training borrows 4 nvidia.com/gpu on a100"
    ]
    assert by_what[("gpu-training", "quota a100/nvidia.com/gpu (nominal 16)")] == [
        "1 admitted workload(s) use 20 nvidia.com/gpu on a100"
    ]
    assert stored_policy() == before


def test_given_borrowing_work_when_applied_without_confirmation_then_refused_and_nothing_saved(borrowing):
    before = stored_policy()

    with pytest.raises(ImportRefused) as refused:
        import_manifests(ALL, dry_run=False)

    assert refused.value.report.refused and len(refused.value.report.dependent_disruptions) == 5
    assert stored_policy() == before  # batch-cpu's harmless move is not saved either: all or nothing


def test_given_borrowing_work_when_applied_with_confirmation_then_everything_is_saved(borrowing):
    report = import_manifests(ALL, dry_run=False, confirm_disruptive=True)

    assert report.as_dict()["applied"] is True and listed(report.as_dict()["disruptions"]) == EXPECTED
    assert Cohort.objects.get(name="research").parent is None
    assert not CohortQuota.objects.filter(cohort__name="research").exists()
    assert not ClusterQueueQuota.objects.filter(cluster_queue__name="gpu-training", flavor__name="a100").exists()
    assert ClusterQueue.objects.get(name="batch-cpu").cohort.name == "research"


def test_given_a_move_nothing_depends_on_then_it_is_applied_without_confirmation_and_listed(borrowing):
    report = import_manifests(BATCH_MOVED, dry_run=False)

    assert listed(report.as_dict()["disruptions"]) == [EXPECTED[-1]]
    assert "    reparent ClusterQueue batch-cpu: cohort platform -> research (no admitted work depends on it)" in (
        report.lines()
    )
    assert ClusterQueue.objects.get(name="batch-cpu").cohort.name == "research"


def test_given_no_admitted_work_then_detaching_and_deleting_quota_needs_no_confirmation(cluster_v1beta2):
    import_manifests(cluster_v1beta2, dry_run=False)

    report = import_manifests(RESEARCH_DETACHED, dry_run=False)

    assert [d.depended_on for d in report.disruptions] == [False, False, False]
    assert Cohort.objects.get(name="research").parent is None


# -- HTTP API ----------------------------------------------------------------------------------


@pytest.fixture
def staff_client() -> APIClient:
    client = APIClient()
    client.force_authenticate(UserFactory(is_staff=True))
    return client


def test_api_given_dry_run_then_200_lists_the_disruptions(staff_client, borrowing):
    response = staff_client.post(f"{IMPORT}?dryRun=true", ALL, content_type="application/yaml")

    assert response.status_code == 200, response.content
    assert listed(response.json()["disruptions"]) == EXPECTED


def test_api_given_dependent_disruptions_without_confirmation_then_400_naming_the_api_parameter_and_nothing_saved(
    staff_client, borrowing
):
    before = stored_policy()

    response = staff_client.post(IMPORT, ALL, content_type="application/yaml")

    assert response.status_code == 400
    body = response.json()
    assert body["refused"] is True and body["applied"] is False
    assert listed(body["disruptions"]) == EXPECTED
    assert body["errors"][0].startswith("confirmDisruptive: 5 deletion(s) or re-parenting(s) that admitted work")
    assert "confirmDisruptive=true" in body["errors"][0] and "--" not in json.dumps(body)
    assert stored_policy() == before


@pytest.mark.parametrize("how", ["query", "json"])
def test_api_given_confirmation_then_applied(staff_client, borrowing, how):
    already = PolicyChange.objects.count()
    if how == "query":
        response = staff_client.post(f"{IMPORT}?confirmDisruptive=true", ALL, content_type="application/yaml")
    else:
        response = staff_client.post(IMPORT, {"manifests": ALL, "confirmDisruptive": True}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["applied"] is True
    assert Cohort.objects.get(name="research").parent is None
    new_rows = PolicyChange.objects.order_by("pk")[already:]
    assert new_rows and {row.surface for row in new_rows} == {"api"}


@pytest.mark.parametrize(
    "url,body", [(f"{IMPORT}?confirmDisruptive=maybe", None), (IMPORT, {"manifests": ALL, "confirmDisruptive": "yes"})]
)
def test_api_given_a_confirmation_that_is_not_a_boolean_then_400_names_it(staff_client, borrowing, url, body):
    if body is None:
        response = staff_client.post(url, ALL, content_type="application/yaml")
    else:
        response = staff_client.post(url, body, format="json")

    assert response.status_code == 400
    assert response.json() == {"errors": ["confirmDisruptive: expected true or false"]}


def test_api_errors_name_api_parameters_never_command_flags(staff_client):
    unsupported = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: t}\n"
    no_namespace = (
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q}\nspec: {clusterQueue: c}\n"
    )

    errors = [
        staff_client.post(IMPORT, text, content_type="application/yaml").json()["errors"][0]
        for text in (unsupported, no_namespace)
    ]

    assert "skipUnsupported=true skips the others" in errors[0]
    assert errors[1].endswith("required for a LocalQueue (the tenant's namespace; or pass the namespace parameter)")
    assert not any("--" in error for error in errors)


# -- the command -------------------------------------------------------------------------------


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command(*args, stdout=out, stderr=err)
    except SystemExit as exit_info:
        return int(exit_info.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


@pytest.fixture
def all_file(tmp_path):
    path = tmp_path / "omits.yaml"
    path.write_text(ALL, encoding="utf-8")
    return str(path)


def test_command_given_dry_run_then_the_disruptions_are_printed(borrowing, all_file):
    status, out, err = run("kueue_import", all_file, "--dry-run")

    assert status == 0 and err == ""
    assert "deletions and re-parenting: 6 (5 with admitted work depending on them)" in out
    assert (
        "    delete ClusterQueue gpu-training: quota a100/nvidia.com/gpu (nominal 16) (admitted work depends on it: "
        "1 admitted workload(s) use 20 nvidia.com/gpu on a100)"
    ) in out.splitlines()


def test_command_given_dependent_disruptions_without_the_flag_then_one_line_exit_3_and_nothing_saved(
    borrowing, all_file
):
    before = stored_policy()

    status, out, err = run("kueue_import", all_file)

    assert status == 3
    assert err.splitlines() == [
        "error: refused: 5 deletion(s) or re-parenting(s) that admitted work depends on (listed above); nothing "
        "imported. Pass --confirm-disruptive to apply them"
    ]
    assert "(refused: nothing saved)" in out and "confirmDisruptive" not in out + err
    assert stored_policy() == before


def test_command_given_the_flag_then_applied(borrowing, all_file):
    status, out, _ = run("kueue_import", all_file, "--confirm-disruptive")

    assert status == 0 and out.rstrip().endswith("(applied)")
    assert Cohort.objects.get(name="research").parent is None
