"""The dashboard's submit form on a real Slurm cluster: a tenant's command becomes a held
``sbatch`` job in the same transaction as the workload, as through the API; a command the
backend cannot run is an error on the command field, with nothing stored."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from core.models import TenantMembership
from fairshare.quantities import parse_millis
from queues.models import ClusterJob, ClusterQueue, ClusterQueueQuota, ResourceFlavor, Workload
from tests.queues.backends.slurm_cluster import queue_job, slurm  # noqa: F401 - fixture
from tests.queues.backends.test_slurm_backend import slurm_queue, slurm_settings  # noqa: F401 - fixture

pytestmark = [pytest.mark.slurm, pytest.mark.django_db(transaction=True)]

URL = reverse("queues:submit-workload", args=["team-a", "main"])


@pytest.fixture
def editor(client):
    local_queue = slurm_queue()
    user = get_user_model().objects.create_user("alice")
    TenantMembership.objects.create(user=user, namespace=local_queue.namespace, role=TenantMembership.Role.EDITOR)
    client.force_login(user)
    return client


def filled(client, **requests: str) -> dict[str, str]:
    form = client.get(URL).context["form"]
    assert "command" in form.fields  # the Slurm backend runs commands, so the form asks for one
    fields = {limit.resource: name for name, limit in form.resource_fields}
    data = {"name": "form-job", "count": "1", "max_runtime": "90s", "command": "sleep 2"}
    data.update({fields[resource]: amount for resource, amount in requests.items()})
    return {**data, "submission_key": form.initial["submission_key"]}


def test_given_slurm_when_a_tenant_submits_a_command_from_the_form_then_a_held_job_runs_it(
    slurm, slurm_settings, editor
):
    response = editor.post(URL, filled(editor, cpu="2", memory="512Mi"))

    assert response.status_code == 302, response.context["form"].errors
    workload = Workload.objects.get(name="form-job")
    held = queue_job(ClusterJob.objects.get(workload=workload).external_id)
    assert (held["state_reason"], held["comment"], held["name"]) == (
        "JobHeldUser",
        "fairportal:team-a/main",
        "form-job",
    )
    assert (held["cpus"], held["memory_per_node"], held["time_limit"]) == (2, 512, 2)


def test_given_a_resource_slurm_cannot_ask_for_then_the_command_field_says_so(slurm, slurm_settings, editor):
    ClusterQueueQuota.objects.create(
        cluster_queue=ClusterQueue.objects.get(),
        flavor=ResourceFlavor.objects.get(),
        resource="example.com/fpga",
        nominal=parse_millis("2"),
    )

    response = editor.post(URL, filled(editor, cpu="1", **{"example.com/fpga": "1"}))

    assert response.status_code == 400
    assert "example.com/fpga has no Slurm TRES" in response.context["form"].errors["command"][0]
    assert not Workload.objects.exists()
