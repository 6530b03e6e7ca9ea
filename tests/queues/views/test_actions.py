"""Tenants act on the dashboard: submit to a LocalQueue and cancel a workload, with the API's rule
(editors of the namespace and admins), the API's services and the API's bounds.

The cluster (tests/queues/views/cluster.py): alice edits team-a, victor views team-a, bob edits
team-b (the other tenant), nobody has no namespace. team-a/train feeds cq-gpu (a100: 8 GPU with
4 more to borrow, 64 CPU; in cohort org); team-a has a hard quota of 8 GPU.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.http import HttpRequest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from core.access import EXECUTORS_GROUP
from queues.models import AdmissionRecord, LocalQueue, Namespace, Workload, WorkloadPriorityClass, WorkloadState
from queues.ui.submit_forms import WorkloadSubmitForm
from tests.queues.views.cluster import GPU, PASSWORD

pytestmark = pytest.mark.django_db

SUBMIT = reverse("queues:submit-workload", args=["team-a", "train"])


@pytest.fixture
def classes(cluster):
    """``high`` granted to team-a; ``urgent`` exists but was granted to nobody."""
    WorkloadPriorityClass.objects.create(name="high", value=100)
    WorkloadPriorityClass.objects.create(name="urgent", value=1000)
    cluster.team_a.allowed_priority_classes = ["high"]
    cluster.team_a.save()
    return cluster


def client_for(username: str) -> Client:
    """A second signed-in client in one test (the ``login`` fixture signs in the one ``client``)."""
    client = Client()
    assert client.login(request=HttpRequest(), username=username, password=PASSWORD)
    return client


def opened(client: Client, url: str = SUBMIT) -> dict[str, str]:
    """The form as the page hands it out (its key and suggested name), to fill in and post."""
    response = client.get(url)
    assert response.status_code == 200
    form = response.context["form"]
    return {"name": form.initial["name"], "count": "1", "submission_key": form.initial["submission_key"]}


def resource_field(response, resource: str) -> str:
    form: WorkloadSubmitForm = response.context["form"]
    name = form.field_of_resource(resource)
    assert name is not None, resource
    return name


def errors_of(response) -> dict[str, list[str]]:
    return {name: list(messages) for name, messages in response.context["form"].errors.items()}


# -- the form is built from the LocalQueue -------------------------------------------------------


def test_given_editor_when_opening_submit_then_fields_and_limits_come_from_the_cluster_queue(classes, login):
    response = login("alice").get(SUBMIT)
    body = response.content.decode()
    form = response.context["form"]

    assert response.status_code == 200
    assert [limit.resource for _, limit in form.resource_fields] == [GPU, "cpu"]  # the quota rows of cq-gpu, GPU first
    gpu, cpu = (limit for _, limit in form.resource_fields)
    assert gpu.flavor_lines == ["a100: 8 (may borrow 4 more)"]
    assert (gpu.hard_text, gpu.largest_text) == ("8", "8")  # 8 + 4 borrowed, capped by team-a's hard quota
    assert cpu.flavor_lines == ["a100: 64 (may borrow what the cohort lends)"] and cpu.largest is None
    assert cpu.unit.startswith("cores") and gpu.unit.startswith("count")
    choices = [value for value, _ in form.fields["priority_class"].widget.choices]
    assert choices == ["", "high"]  # only what team-a was granted
    assert "priority" not in form.fields  # raw priorities are the admins'
    assert "command" not in form.fields  # the simulated cluster runs no commands
    assert "a100: 8 (may borrow 4 more)" in body and 'name="resource_0"' in body


def test_given_admin_when_opening_submit_then_every_class_and_a_raw_priority_are_offered(classes, login):
    form = login("admin").get(SUBMIT).context["form"]

    assert [value for value, _ in form.fields["priority_class"].widget.choices] == ["", "urgent", "high"]
    assert "priority" in form.fields


# -- submitting ----------------------------------------------------------------------------------


def test_given_editor_when_submitting_then_the_workload_pends_and_the_page_shows_it(classes, login):
    client = login("alice")
    data = opened(client)
    gpu_field = resource_field(client.get(SUBMIT), GPU)
    data.update(
        {
            "name": "ui-job",
            "count": "2",
            gpu_field: "1",
            "resource_1": "4",
            "priority_class": "high",
            "duration": "1h30m",
            "max_runtime": "2h",
        }
    )

    response = client.post(SUBMIT, data)

    assert response.status_code == 302
    assert response["Location"] == reverse("queues:workload", args=["team-a", "ui-job"])
    workload = Workload.objects.get(namespace=classes.team_a, name="ui-job")
    assert workload.state == WorkloadState.PENDING and workload.local_queue == classes.a_train
    assert workload.pod_sets == [{"name": "main", "count": 2, "requests": {GPU: 1000, "cpu": 4000}}]
    assert (workload.priority, workload.priority_class) == (100, "high")
    assert (workload.duration_seconds, workload.max_runtime_seconds) == (5400, 7200)
    page = client.get(response["Location"])
    assert "ui-job submitted to LocalQueue team-a/train" in page.content.decode()
    assert page.context["can_cancel"] is True
    assert reverse("queues:cancel-workload", args=["team-a", "ui-job"]) in page.content.decode()


def test_given_no_class_named_when_submitting_then_the_namespace_default_applies(classes, login):
    classes.team_a.default_priority_class = WorkloadPriorityClass.objects.get(name="high")
    classes.team_a.save()
    client = login("alice")
    data = {**opened(client), "name": "defaulted", "resource_1": "1"}

    assert client.post(SUBMIT, data).status_code == 302
    assert Workload.objects.get(name="defaulted").priority_class == "high"


def test_given_same_form_posted_twice_then_one_workload_and_the_second_post_finds_it(classes, login):
    client = login("alice")
    data = {**opened(client), "name": "twice", "resource_1": "1"}

    first = client.post(SUBMIT, data)
    second = client.post(SUBMIT, data, follow=True)

    assert first.status_code == 302 and second.redirect_chain[-1][0] == first["Location"]
    assert Workload.objects.filter(name="twice").count() == 1
    assert "twice was already submitted" in second.content.decode()


def test_given_a_used_form_posted_with_other_values_then_it_is_refused_and_nothing_more_is_stored(classes, login):
    client = login("alice")
    data = {**opened(client), "name": "first-use", "resource_1": "1"}
    assert client.post(SUBMIT, data).status_code == 302

    reused = client.post(SUBMIT, {**data, "name": "second-use"})

    assert reused.status_code == 400
    assert "already used for another submission" in " ".join(reused.context["form"].non_field_errors())
    assert not Workload.objects.filter(name="second-use").exists()


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        (
            {"priority_class": "urgent"},
            "priority_class",
            "not a priority class namespace team-a may use (allowed: high)",
        ),
        ({"resource_0": "lots"}, "resource_0", "quantity"),
        ({"resource_0": "", "resource_1": ""}, "resource_0", "request at least one resource"),
        ({"name": "Not_A_Name"}, "name", "is not a valid name"),
        ({"name": "a-job-0"}, "name", "namespace team-a already has a workload with this name"),
        ({"count": "0"}, "count", "greater than or equal to 1"),
        ({"count": "100001"}, "count", "less than or equal to 100000"),
        ({"duration": "soon"}, "duration", "is not a duration"),
        ({"max_runtime": "100000d"}, "max_runtime", "out of range"),
        ({"submission_key": "has spaces"}, "submission_key", "reload the page"),
    ],
)
def test_given_bad_input_when_submitting_then_the_field_is_named_and_nothing_is_stored(
    classes, login, changes, field, message
):
    client = login("alice")
    before = Workload.objects.count()
    data = {**opened(client), "name": "bad-input", "resource_1": "1", **changes}

    response = client.post(SUBMIT, data)

    assert response.status_code == 400
    errors = errors_of(response)
    assert field in errors, errors
    assert any(message in text for text in errors[field]), errors
    assert Workload.objects.count() == before


def test_given_a_raw_priority_from_an_admin_then_it_is_taken_as_the_api_takes_it(classes, login):
    client = login("admin")
    data = {**opened(client), "name": "raw", "resource_1": "1", "priority": "7"}

    assert client.post(SUBMIT, data).status_code == 302
    assert (Workload.objects.get(name="raw").priority, Workload.objects.get(name="raw").priority_class) == (7, "")


def test_given_huge_inputs_then_errors_are_short_and_do_not_repeat_them(classes, login):
    client = login("alice")
    huge = "x" * 20_000
    data = {**opened(client), "name": huge, "resource_0": "9" * 5_000, "duration": huge, "priority_class": huge}

    response = client.post(SUBMIT, data)

    assert response.status_code == 400
    errors = errors_of(response)
    assert set(errors) >= {"name", "resource_0", "duration", "priority_class"}
    for messages in errors.values():
        for text in messages:
            assert len(text) < 200 and "xxxxxxxxxx" not in text and "9999999999" not in text
    assert not Workload.objects.filter(name__startswith="xxx").exists()


def test_given_total_past_the_bigint_then_the_resource_field_says_so(classes, login):
    client = login("alice")
    # 10^11 cores a pod parses (10^14 millis), but 100,000 pods of it overflow the BIGINT columns.
    data = {**opened(client), "name": "too-big", "count": "100000", "resource_1": "100000000000"}

    response = client.post(SUBMIT, data)

    assert response.status_code == 400
    assert errors_of(response)["resource_1"] == ["100000 pods of this much is too large in total"]
    assert not Workload.objects.filter(name="too-big").exists()


# -- who may submit ------------------------------------------------------------------------------


def test_given_other_tenant_when_opening_or_posting_then_404_naming_nothing(classes, login):
    client = login("bob")
    data = {"name": "sneaky", "count": "1", "resource_1": "1", "submission_key": "k1"}

    for response in (client.get(SUBMIT), client.post(SUBMIT, data)):
        assert response.status_code == 404
        body = response.content.decode()
        assert "team-a" not in body and "cq-gpu" not in body
    assert not Workload.objects.filter(name="sneaky").exists()


@pytest.mark.parametrize("user", ["victor", "nobody"])
def test_given_viewer_or_stranger_then_submit_is_refused(classes, login, user):
    client = login(user)
    data = {"name": "viewer-job", "count": "1", "resource_1": "1", "submission_key": "k2"}

    expected = 403 if user == "victor" else 404  # victor sees team-a; nobody sees no namespace
    assert client.get(SUBMIT).status_code == expected
    assert client.post(SUBMIT, data).status_code == expected
    assert not Workload.objects.filter(name="viewer-job").exists()


def test_given_anonymous_then_submit_asks_to_sign_in(cluster, client):
    response = client.get(SUBMIT)
    assert response.status_code == 302 and reverse("login") in response["Location"]


def test_given_no_csrf_token_then_submit_is_refused(classes):
    client = Client(enforce_csrf_checks=True)
    client.force_login(get_user_model().objects.get(username="alice"))
    data = {"name": "csrf-less", "count": "1", "resource_1": "1", "submission_key": "k3"}

    assert client.post(SUBMIT, data).status_code == 403
    assert not Workload.objects.filter(name="csrf-less").exists()


def test_given_roles_then_the_chooser_lists_what_each_may_submit_to(cluster, login):
    alice = login("alice").get(reverse("queues:submit-choose"))
    assert [lq.key for lq in alice.context["local_queues"]] == ["team-a/batch", "team-a/train"]
    assert f'href="{reverse("queues:submit-choose")}"' in alice.content.decode()  # the sidebar link

    victor = client_for("victor")
    page = victor.get(reverse("queues:submit-choose"))
    assert page.context["local_queues"] == [] and 'id="no-submit-targets"' in page.content.decode()
    assert f'href="{reverse("queues:submit-choose")}"' not in page.content.decode()


def test_given_editor_or_viewer_then_the_local_queue_page_offers_submit_only_to_the_editor(cluster, login):
    page = reverse("queues:local-queue", args=["team-a", "train"])
    assert 'id="submit-workload"' in login("alice").get(page).content.decode()
    viewer = client_for("victor")
    assert 'id="submit-workload"' not in viewer.get(page).content.decode()


def test_given_slurm_backend_then_the_form_asks_for_the_command(cluster, login, settings):
    settings.CLUSTER_BACKEND = "slurm"
    form = login("alice").get(SUBMIT).context["form"]
    assert "command" in form.fields and form.fields["command"].max_length == 4096


def test_given_the_queues_flavors_on_another_cluster_then_that_cluster_decides_the_command_field(
    cluster, login, settings
):
    """The form asks for a command when the clusters the LocalQueue's work may run on run commands,
    whatever the default cluster is (issue 27: a site whose default cluster is simulated)."""
    from queues.models import Cluster, ClusterQueueQuota, ResourceFlavor

    flavors = ResourceFlavor.objects.filter(
        id__in=ClusterQueueQuota.objects.filter(
            cluster_queue_id=LocalQueue.objects.get(namespace__name="team-a", name="train").cluster_queue_id
        ).values("flavor_id")
    )
    settings.CLUSTER_BACKEND = "slurm"  # the default cluster runs commands, the queue's does not
    simulated = Cluster.objects.create(name="sim-east", backend="simulated")
    flavors.update(cluster=simulated)
    assert "command" not in login("alice").get(SUBMIT).context["form"].fields

    settings.CLUSTER_BACKEND = "simulated"  # and the other way round
    slurm = Cluster.objects.create(name="slurm-west", backend="slurm", slurm_conf="/nonexistent/slurm.conf")
    flavors.update(cluster=slurm)
    assert "command" in client_for("alice").get(SUBMIT).context["form"].fields


# -- cancelling ----------------------------------------------------------------------------------


def cancel_url(name: str, namespace: str = "team-a") -> str:
    return reverse("queues:cancel-workload", args=[namespace, name])


def test_given_pending_workload_when_editor_confirms_then_it_is_cancelled(cluster, login):
    client = login("alice")

    confirm = client.get(cancel_url("a-job-1"))
    assert confirm.status_code == 200 and 'id="confirm-cancel"' in confirm.content.decode()
    assert Workload.objects.get(name="a-job-1").state == WorkloadState.PENDING  # a GET changes nothing

    response = client.post(cancel_url("a-job-1"), {"message": "wrong data"})

    assert response.status_code == 302
    assert response["Location"] == reverse("queues:workload", args=["team-a", "a-job-1"])
    workload = Workload.objects.get(name="a-job-1")
    assert workload.state == WorkloadState.CANCELLED and workload.finished_at is not None
    page = client.get(response["Location"])
    assert "Cancelled team-a/a-job-1: withdrawn before it was admitted" in page.content.decode()
    assert page.context["can_cancel"] is False


def test_given_admitted_workload_when_cancelled_then_its_admission_ends_with_the_message(cluster, login):
    admitted = Workload.objects.get(name="a-job-0")
    assert admitted.state == WorkloadState.ADMITTED

    response = login("alice").post(cancel_url("a-job-0"), {"message": "not needed"})

    assert response.status_code == 302
    assert Workload.objects.get(pk=admitted.pk).state == WorkloadState.CANCELLED
    record = AdmissionRecord.objects.filter(workload=admitted).order_by("-admitted_at").first()
    assert record is not None and record.ended_at is not None and record.end_message == "not needed"


def test_given_ended_workload_when_cancel_posted_then_409_names_its_state(cluster, login):
    client = login("alice")
    assert client.post(cancel_url("a-job-2")).status_code == 302

    again = client.post(cancel_url("a-job-2"))

    assert again.status_code == 409
    assert "it is Cancelled" in again.content.decode()
    assert 'id="confirm-cancel"' not in again.content.decode()


def test_given_other_tenant_when_cancelling_then_404_and_the_workload_is_untouched(cluster, login):
    client = login("bob")
    for response in (client.get(cancel_url("a-job-1")), client.post(cancel_url("a-job-1"))):
        assert response.status_code == 404 and "a-job-1" not in response.content.decode()
    assert Workload.objects.get(name="a-job-1").state == WorkloadState.PENDING


def test_given_viewer_or_executor_when_cancelling_then_403(cluster, login):
    executor = get_user_model().objects.create_user("runner", password=PASSWORD)
    executor.groups.add(Group.objects.get_or_create(name=EXECUTORS_GROUP)[0])
    for username in ("victor", "runner"):
        client = client_for(username)
        assert client.get(cancel_url("a-job-1")).status_code == 403
        assert client.post(cancel_url("a-job-1")).status_code == 403
        detail = client.get(reverse("queues:workload", args=["team-a", "a-job-1"]))
        assert detail.context["can_cancel"] is False
    assert Workload.objects.get(name="a-job-1").state == WorkloadState.PENDING


def test_given_overlong_reason_then_cancel_refuses_and_keeps_the_workload(cluster, login):
    client = login("alice")
    assert 'id="id_message"' in client.get(cancel_url("a-job-0")).content.decode()  # admitted: a reason is kept
    assert 'id="id_message"' not in client.get(cancel_url("a-job-1")).content.decode()  # pending: it never ran

    response = client.post(cancel_url("a-job-0"), {"message": "x" * 301})

    assert response.status_code == 400
    assert "at most 300 characters" in " ".join(response.context["form"].errors["message"])
    assert "x" * 301 not in " ".join(response.context["form"].errors["message"])
    assert Workload.objects.get(name="a-job-0").state == WorkloadState.ADMITTED


def test_given_no_csrf_token_then_cancel_is_refused(cluster):
    client = Client(enforce_csrf_checks=True)
    client.force_login(get_user_model().objects.get(username="alice"))
    assert client.post(cancel_url("a-job-1")).status_code == 403
    assert Workload.objects.get(name="a-job-1").state == WorkloadState.PENDING


# -- workloads named on other pages are links ----------------------------------------------------


def test_given_budget_page_then_top_consumers_link_to_their_workloads(cluster, login):
    body = login("alice").get(reverse("budgets:detail", args=["a-gpu-hours"])).content.decode()
    consumers = re.search(r'<table class="grid" id="consumers">.*?</table>', body, re.S)

    assert consumers is not None
    link = reverse("queues:workload", args=["team-a", "a-job-0"])
    assert f'href="{link}"' in consumers.group(0)


# -- the same services as the API ----------------------------------------------------------------


def api_client(username: str) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(username=username))
    return client


def test_given_the_same_submission_through_api_and_form_then_the_stored_workloads_match(classes, login):
    api = api_client("alice").post(
        "/api/v1/workloads/",
        {
            "name": "via-api",
            "local_queue": "team-a/train",
            "pod_sets": [{"count": 2, "requests": {GPU: "1", "cpu": "500m"}}],
            "priority_class": "high",
            "duration_seconds": 5400,
            "max_runtime_seconds": 7200,
        },
        format="json",
    )
    assert api.status_code == 201, api.content
    client = login("alice")
    data = {**opened(client), "name": "via-form", "count": "2", "resource_0": "1", "resource_1": "500m"}
    data.update({"priority_class": "high", "duration": "90m", "max_runtime": "2h"})
    assert client.post(SUBMIT, data).status_code == 302

    compared = ["namespace_id", "local_queue_id", "state", "pod_sets", "priority", "priority_class"]
    compared += ["duration_seconds", "max_runtime_seconds"]
    by_api, by_form = (Workload.objects.filter(name=name).values(*compared).get() for name in ("via-api", "via-form"))
    assert by_api == by_form
    resources = {
        name: dict(Workload.objects.get(name=name).resources.values_list("resource", "amount"))
        for name in ("via-api", "via-form")
    }
    assert resources["via-api"] == resources["via-form"] == {GPU: 2000, "cpu": 1000}


def test_given_a_class_not_granted_then_api_and_form_refuse_it_with_the_same_words(classes, login):
    api = api_client("alice").post(
        "/api/v1/workloads/",
        {
            "name": "nope",
            "local_queue": "team-a/train",
            "pod_sets": [{"requests": {"cpu": "1"}}],
            "priority_class": "urgent",
        },
        format="json",
    )
    client = login("alice")
    form = client.post(SUBMIT, {**opened(client), "name": "nope", "resource_1": "1", "priority_class": "urgent"})

    assert api.status_code == 400 and form.status_code == 400
    assert errors_of(form)["priority_class"] == [str(message) for message in api.json()["priority_class"]]


def test_given_many_local_queues_then_the_chooser_shows_them_a_page_at_a_time(cluster, login):
    for index in range(60):
        namespace = Namespace.objects.create(name=f"many-{index:02d}")
        LocalQueue.objects.create(namespace=namespace, name="q", cluster_queue=cluster.cq_cpu)
    client = login("admin")

    first = client.get(reverse("queues:submit-choose"))
    second = client.get(reverse("queues:submit-choose"), {"page": "2"})

    assert len(first.context["local_queues"]) == 50 and first.context["page"].paginator.count == 64
    assert len(second.context["local_queues"]) == 14
    assert "?page=2" in first.content.decode()
