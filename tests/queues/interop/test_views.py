"""The HTTP surface of Kueue interop: staff only (session or token), dry run and apply, export."""

from __future__ import annotations

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework.test import APIClient

from core.api_tokens import issue_token
from core.models import PolicyChange
from queues.interop.kueue.apply import import_manifests
from queues.models import ClusterQueue, default_cluster
from tests.queues.interop.conftest import manifest

pytestmark = pytest.mark.django_db

IMPORT = reverse("interop:kueue-import")
EXPORT = reverse("interop:kueue-export")


def make_user(username: str, *, staff: bool = False):
    return get_user_model().objects.create_user(username=username, password="pw", is_staff=staff)


@pytest.fixture
def staff_client() -> APIClient:
    user = make_user("ops", staff=True)
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_given_tenant_or_anonymous_when_importing_then_refused():
    tenant = APIClient()
    tenant.force_authenticate(make_user("alice"))

    assert APIClient().post(IMPORT, "x", content_type="application/yaml").status_code in (401, 403)
    assert tenant.post(IMPORT, "x", content_type="application/yaml").status_code == 403
    assert tenant.get(EXPORT).status_code == 403


def test_given_staff_when_dry_run_with_yaml_body_then_diff_and_nothing_saved(staff_client, cluster_v1beta2):
    response = staff_client.post(f"{IMPORT}?dryRun=true", cluster_v1beta2, content_type="application/yaml")

    assert response.status_code == 200
    body = response.json()
    assert body["dryRun"] is True and body["applied"] is False
    assert body["summary"] == {"created": 19, "updated": 0, "unchanged": 0}
    assert not ClusterQueue.objects.exists()


def test_given_staff_when_applying_json_body_then_saved_and_audited_as_api(staff_client, cluster_v1beta2):
    response = staff_client.post(IMPORT, {"manifests": cluster_v1beta2}, format="json")

    assert response.status_code == 200 and response.json()["applied"] is True
    assert ClusterQueue.objects.count() == 3
    rows = PolicyChange.objects.all()
    assert {row.surface for row in rows} == {"api"} and {row.actor_name for row in rows} == {"ops"}


def test_given_invalid_manifests_when_posted_then_400_with_every_error(staff_client):
    response = staff_client.post(IMPORT, manifest("invalid-quantities.yaml"), content_type="text/plain")

    assert response.status_code == 400
    errors = response.json()["errors"]
    assert len(errors) == 2 and errors[0].startswith("document 3 (ClusterQueue 'negative'): spec.resourceGroups[0]")
    assert not ClusterQueue.objects.exists()


def test_given_json_without_manifests_when_posted_then_400_names_the_field(staff_client):
    response = staff_client.post(IMPORT, {"dryRun": True}, format="json")

    assert response.status_code == 400
    assert response.json() == {"errors": ["manifests: required, the YAML text of the manifests"]}


@pytest.mark.parametrize("body", ["true", "3", "[1]"])
def test_given_json_that_is_not_an_object_when_posted_then_400_not_500(staff_client, body):
    response = staff_client.post(IMPORT, body, content_type="application/json")

    assert response.status_code == 400
    assert response.json() == {
        "errors": ['body: expected YAML text or a JSON object {"manifests": "...", "dryRun": false}']
    }


def test_given_token_of_staff_user_when_exporting_then_yaml_with_warnings_as_comments(cluster_v1beta2):
    user = make_user("robot", staff=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(user)}")
    client.post(IMPORT, cluster_v1beta2, content_type="application/yaml")

    response = client.get(f"{EXPORT}?apiVersion=v1beta1")

    assert response.status_code == 200 and response["Content-Type"].startswith("application/yaml")
    text = response.content.decode()
    assert text.startswith("# warning: Cohort org: admissionScope on a Cohort follows KEP-4136")
    assert {d["apiVersion"] for d in yaml.safe_load_all(text)} == {"kueue.x-k8s.io/v1beta1"}


def test_given_json_accept_when_exporting_then_documents_and_warnings(staff_client, cluster_v1beta2):
    staff_client.post(IMPORT, cluster_v1beta2, content_type="application/yaml")

    body = staff_client.get(EXPORT, HTTP_ACCEPT="application/json").json()

    assert len(body["documents"]) == 16 and body["warnings"]
    assert staff_client.get(f"{EXPORT}?apiVersion=v2").status_code == 400


def test_given_imported_priority_classes_then_staff_see_them_in_the_admin(admin_client, cluster_v1beta2):
    import_manifests(cluster_v1beta2, dry_run=False)

    page = admin_client.get(reverse("admin:queues_workloadpriorityclass_changelist")).content.decode()

    assert "production" in page and "best-effort" in page


@pytest.mark.parametrize("body", ["null", "[]", "42", "true"])
def test_given_a_json_body_that_is_not_an_object_when_importing_then_400_says_what_the_body_must_be(staff_client, body):
    response = staff_client.post(IMPORT, body, content_type="application/json")

    assert response.status_code == 400, response.content
    assert response.json() == {
        "errors": ['body: expected YAML text or a JSON object {"manifests": "...", "dryRun": false}']
    }
    assert not ClusterQueue.objects.exists()


@pytest.mark.parametrize("text", ["null\n", "---\n---\n", "~\n"])
def test_given_yaml_without_any_object_when_importing_then_400_not_an_empty_success(staff_client, text):
    response = staff_client.post(IMPORT, text, content_type="application/yaml")

    assert response.status_code == 400, response.content
    assert response.json() == {"errors": ["body: no Kubernetes objects in the manifests"]}


@pytest.mark.parametrize("flag", ["maybe", "2"])
def test_given_a_dry_run_flag_that_is_neither_true_nor_false_then_400_names_it(staff_client, flag):
    response = staff_client.post(
        f"{IMPORT}?dryRun={flag}", manifest("cluster-v1beta2.yaml"), content_type="application/yaml"
    )

    assert response.status_code == 400
    assert response.json() == {"errors": ["dryRun: expected true or false"]}
    assert not ClusterQueue.objects.exists()


def test_given_clusters_over_http_then_import_audits_them_and_export_writes_them_back(staff_client):
    """The API carries clusters as the command does: a MultiKueueCluster per cluster, errors
    naming the annotation, the JSON export listing them."""
    response = staff_client.post(IMPORT, manifest("clusters-v1beta2.yaml"), content_type="application/yaml")

    assert response.status_code == 200, response.json()
    assert PolicyChange.objects.filter(surface="api", note__contains="MultiKueueCluster").count() == 2  # created
    documents = staff_client.get(EXPORT, HTTP_ACCEPT="application/json").json()["documents"]
    assert sorted(d["metadata"]["name"] for d in documents if d["kind"] == "MultiKueueCluster") == sorted(
        [default_cluster().name, "slurm-a", "slurm-b"]
    )
    bad = manifest("clusters-v1beta2.yaml").replace("env:SLURM_B_JWT", "a-token-value")
    refused = staff_client.post(IMPORT, bad, content_type="application/yaml")
    assert refused.status_code == 400
    assert refused.json()["errors"] == [
        "document 3 (MultiKueueCluster 'slurm-b'): metadata.annotations[fairportal.io/rest-secret]: expected "
        "env:VARIABLE_NAME or file:/absolute/path (where the token is; never the token itself)"
    ]
