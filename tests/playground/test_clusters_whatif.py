"""The playground's multi-cluster what-if: move a flavor or a ClusterQueue's quota to another
cluster, or take a cluster down for a while, and compare per cluster (editor, policy diff,
service, page, API, live export)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from core.api_tokens import issue_token
from playground import documents, editor
from playground.live_export import export_live_state, export_policy
from playground.models import Run
from playground.policy_diff import DATABASE, SIMULATION, policy_deltas
from playground.services import runs
from playground.services.scenarios import create_from_document
from queues.models import Cluster, ResourceFlavor
from tests.playground.clusters import DOC, doc_block
from tests.playground.clusters import two_clusters_document as document

pytestmark = pytest.mark.django_db

MOVE_TEAM_A = "clusterQueues.team-a.quotas.a100.flavor=h100"


def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(user)}")
    return client


def cluster_figures(row: dict) -> dict[str, tuple]:
    return {k["key"].split(".", 2)[2]: (k["baseline"], k["edited"]) for k in row["kpis"]}


# --- the editor ---------------------------------------------------------------------------------


def test_the_editor_offers_each_flavors_cluster_each_quotas_flavor_and_each_clusters_outage():
    fields = {f.path: f for f in editor.editable_fields(documents.validate(document()))}

    flavor = fields["resourceFlavors.a100.cluster"]
    assert (flavor.group, flavor.initial, flavor.choices) == ("Clusters", "old", (("old", "old"), ("new", "new")))
    quota = fields["clusterQueues.team-a.quotas.a100.flavor"]
    assert quota.initial == "a100"
    assert quota.choices == (("a100", "a100 (old)"), ("h100", "h100 (new)"))  # flavors team-a does not hold yet
    assert fields["clusters.old.unavailable.from"].initial == ""
    assert "Clusters" in [group for group, _ in editor.grouped(list(fields.values()))]

    submitted = {"resourceFlavors.a100.cluster": "new", "clusters.new.unavailable.from": "1h"}
    assert editor.edits_from(list(fields.values()), submitted) == [
        "resourceFlavors.a100.cluster=new",
        "clusters.new.unavailable.from=1h",
    ]


def test_a_scenario_without_clusters_has_no_clusters_group():
    doc = document()
    del doc["clusters"]
    for flavor in doc["resourceFlavors"]:
        del flavor["cluster"]
    fields = editor.editable_fields(documents.validate(doc))
    assert not [f for f in fields if f.group == "Clusters"]


# --- what the edits change ----------------------------------------------------------------------


def test_the_policy_diff_names_the_moves():
    baseline = documents.validate(document())
    _, edited = documents.apply_edits(
        document(),
        [
            MOVE_TEAM_A,
            "resourceFlavors.a100.cluster=new",
            "clusters.old.unavailable.from=1h",  # the docs' two edits
            "clusters.old.unavailable.until=3h",
        ],
    )

    deltas = {(d.kind, d.name, d.field): d for d in policy_deltas(baseline, edited)}

    quota = deltas[("clusterQueue", "team-a", "quotas")]
    assert quota.target == DATABASE and quota.note == "nvidia.com/gpu: cluster old -> new"
    moved = deltas[("resourceFlavor", "a100", "cluster")]
    assert (moved.target, moved.label, moved.before, moved.after) == (
        SIMULATION,
        "ResourceFlavor a100 cluster",
        "old",
        "new",
    )
    outage = deltas[("cluster", "old", "unavailable")]
    assert (outage.target, outage.before, outage.after) == (SIMULATION, None, "1h to 3h")


# --- a run, side by side per cluster -------------------------------------------------------------


def test_given_team_as_gpus_moved_to_the_new_cluster_then_the_run_compares_per_cluster(admin, no_broker):
    scenario = create_from_document(document(), owner=admin)
    run = runs.execute_run(runs.start_run(scenario, edits=[MOVE_TEAM_A], owner=admin).pk)
    assert run.status == Run.Status.SUCCEEDED, run.error

    old, new = run.comparison["clusters"]
    assert (old["cluster"], new["cluster"]) == ("old", "new")
    # Baseline: a1 then a2 on a100 (old) over [0, 2 h), b1 on h100 (new) over [0, 1 h).
    # Edited: everything on h100; the new cluster holds 128 GPUs of quota: (2 + 1) * 64 GPU-hours
    # of 128 * 4 -> 0.375; the old one holds none.
    assert old["capacity"] == {"baseline": {"nvidia.com/gpu": 64}, "edited": {}}
    assert new["capacity"] == {"baseline": {"nvidia.com/gpu": 64}, "edited": {"nvidia.com/gpu": 128}}
    assert cluster_figures(old) == {
        "utilization.nvidia.com/gpu": (0.5, None),
        "admitted": (2, 0),
        "wait.p50": (0, 0),
        "wait.p95": (3600, 0),
    }
    assert cluster_figures(new) == {
        "utilization.nvidia.com/gpu": (0.25, 0.375),
        "admitted": (1, 3),
        "wait.p50": (0, 0),
        "wait.p95": (0, 3600),
    }
    assert [k["scope"] for k in new["kpis"]] == ["run", "admitted", "placed", "placed"]
    assert any(d["note"] == "nvidia.com/gpu: cluster old -> new" for d in run.deltas)


def test_the_docs_comparison_table_is_what_the_run_computes(admin, no_broker):
    scenario = create_from_document(document(), owner=admin)
    run = runs.execute_run(runs.start_run(scenario, edits=[MOVE_TEAM_A], owner=admin).pk)
    assert f"`{MOVE_TEAM_A}`, the example compares as:" in DOC.read_text().replace("\n", " ")

    def side(value, unit=""):
        if value is None:
            return "—"
        return f"{value * 100:g}%" if unit == "ratio" else f"{value:g}"

    computed = []
    for row in run.comparison["clusters"]:
        figures = cluster_figures(row)
        capacity = [(row["capacity"][s] or {}).get("nvidia.com/gpu", 0) for s in ("baseline", "edited")]
        cells = [row["cluster"], f"{capacity[0]} → {capacity[1]}"]
        use = figures["utilization.nvidia.com/gpu"]
        cells.append(f"{side(use[0], 'ratio')} → {side(use[1], 'ratio')}")
        for key in ("admitted", "wait.p50", "wait.p95"):
            cells.append(f"{side(figures[key][0])} → {side(figures[key][1])}")
        computed.append("| " + " | ".join(cells) + " |")
    assert doc_block("two-clusters comparison")[2:] == computed


def test_the_run_page_shows_each_cluster_and_what_its_figures_are_over(client, admin, no_broker):
    scenario = create_from_document(document(), owner=admin)
    run = runs.execute_run(runs.start_run(scenario, edits=[MOVE_TEAM_A], owner=admin).pk)
    client.force_login(admin)

    body = client.get(reverse("playground:run", args=[run.pk])).content.decode()

    assert 'id="clusters"' in body and 'data-cluster="old"' in body and 'data-cluster="new"' in body
    assert 'data-kpi="clusters.new.utilization.nvidia.com/gpu"' in body
    assert "averaged over the 4 h simulation" in body
    assert "workloads whose last admission placed them on it, in the 4 h simulation" in body
    assert "nvidia.com/gpu: cluster old -&gt; new" in body
    assert "capacity {nvidia.com/gpu=64} → <strong>none</strong>" in body  # the old cluster keeps no quota
    assert "no capacity on one side" in body  # its utilisation has nothing to compare with


def test_the_editor_form_moves_a_flavor_and_an_incomplete_outage_is_a_form_error_naming_the_field(client, admin):
    scenario = create_from_document(document(), owner=admin)
    client.force_login(admin)
    url = reverse("playground:scenario", args=[scenario.pk])
    form = client.get(url).context["form"]
    data = {form.by_path[spec.path]: spec.initial for spec in form.editable}

    data[form.by_path["clusters.old.unavailable.from"]] = "1h"  # and no "until"
    refused = client.post(url, data)
    assert refused.status_code == 400 and not Run.objects.exists()
    [error] = refused.context["form"].errors[form.by_path["clusters.old.unavailable.from"]]
    assert error == "clusters[0].unavailable.until: is required"

    data[form.by_path["clusters.old.unavailable.from"]] = ""
    data[form.by_path["resourceFlavors.a100.cluster"]] = "new"
    with pytest.MonkeyPatch.context() as patch:
        from playground import tasks

        patch.setattr(tasks.run_playground, "delay", lambda run_id: None)
        response = client.post(url, data)
    run = Run.objects.get()
    assert response.status_code == 302 and run.edits == ["resourceFlavors.a100.cluster=new"]


# --- the API --------------------------------------------------------------------------------------


BASE = "/api/v1/playground"


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        (
            "resourceFlavors.a100.cluster=moon",
            "resourceFlavors[0].cluster: unknown cluster 'moon' (declare it in clusters)",
        ),
        ("clusters.old.unavailable={from: 3h, until: 1h}", "clusters[0].unavailable.until: must be after from"),
        (
            "clusterQueues.team-a.quotas.a100.flavor=tpu",
            "clusterQueues[0].quotas[0].flavor: unknown resource flavor 'tpu' (declare it in resourceFlavors)",
        ),
        ("clusters.moon.unavailable.from=1h", "no clusters entry named 'moon'"),
    ],
)
def test_a_bad_cluster_edit_over_the_api_is_a_400_naming_the_field(admin, edit, error):
    client = api(admin)
    scenario = client.post(f"{BASE}/scenarios/", {"source": "document", "document": document()}, format="json").json()

    response = client.post(f"{BASE}/runs/", {"scenario": scenario["id"], "edits": [edit]}, format="json")

    assert (response.status_code, response.json()) == (400, {"edits": {"0": [error]}})
    assert not Run.objects.exists()


def test_the_api_runs_a_move_and_returns_the_per_cluster_comparison_and_a_tenant_cannot_reach_it(
    admin, tenant, no_broker
):
    client = api(admin)
    scenario = client.post(f"{BASE}/scenarios/", {"source": "document", "document": document()}, format="json").json()
    run = client.post(f"{BASE}/runs/", {"scenario": scenario["id"], "edits": [MOVE_TEAM_A]}, format="json").json()
    runs.execute_run(run["id"])

    comparison = client.get(f"{BASE}/runs/{run['id']}/comparison/").json()
    assert [row["cluster"] for row in comparison["clusters"]] == ["old", "new"]

    theirs = api(tenant)
    assert theirs.get(f"{BASE}/runs/{run['id']}/comparison/").status_code == 404
    assert theirs.get(f"{BASE}/scenarios/{scenario['id']}/").status_code == 404
    refused = theirs.post(f"{BASE}/runs/", {"scenario": scenario["id"], "edits": [MOVE_TEAM_A]}, format="json")
    assert refused.status_code == 400 and "scenario" in refused.json()


# --- today's clusters in a live export -------------------------------------------------------------


def test_a_live_export_lists_the_clusters_and_each_flavors_cluster_when_there_are_several():
    default = Cluster.objects.get(from_settings=True)
    ResourceFlavor.objects.create(name="a100")  # on the default cluster
    assert export_policy(now=datetime(2026, 11, 28, tzinfo=UTC))["resourceFlavors"] == [{"name": "a100"}]
    assert "clusters" not in export_policy(now=datetime(2026, 11, 28, tzinfo=UTC))

    new = Cluster.objects.create(name="burst", backend="simulated")
    ResourceFlavor.objects.create(name="h100", cluster=new)
    exported = export_live_state(now=datetime(2026, 11, 28, tzinfo=UTC))

    assert exported["clusters"] == [{"name": name} for name in sorted([default.name, "burst"])]
    assert exported["resourceFlavors"] == [
        {"name": "a100", "cluster": default.name},
        {"name": "h100", "cluster": "burst"},
    ]
    assert documents.validate(exported).flavor_clusters == {"a100": default.name, "h100": "burst"}


def test_a_quota_changed_and_moved_in_one_submission_is_changed_then_moved():
    doc = document()
    fields = editor.editable_fields(documents.validate(doc))
    submitted = {
        "clusterQueues.team-a.quotas.a100.flavor": "h100",
        "clusterQueues.team-a.quotas.a100.nvidia.com/gpu.nominal": "32",
    }

    edits = editor.edits_from(fields, submitted)
    _, edited = documents.apply_edits(doc, edits)

    assert edits[-1] == "clusterQueues.team-a.quotas.a100.flavor=h100"  # the move comes last
    [quota] = edited.cluster_queues[0].quotas
    assert (quota.flavor, quota.resources["nvidia.com/gpu"].nominal) == ("h100", 32_000)
