"""The overview: the cluster for admins, a tenant's own namespaces for tenants."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from tests.queues.views.cluster import page_text

pytestmark = pytest.mark.django_db


def figures(response) -> dict[str, dict]:
    """The Plotly figures of the overview (embedded with json_script as ``figure-data-<id>``)."""
    return response.context["overview"].figures


def test_given_cluster_when_admin_opens_overview_then_capacity_counts_and_consumers_are_shown(cluster, login):
    response = login("admin").get(reverse("queues:home"))
    body = response.content.decode()
    overview = response.context["overview"]

    assert response.status_code == 200
    assert "Cluster overview" in body
    assert (overview.admitted, overview.pending) == (2, 6)
    rows = {(row.flavor, row.resource): row for row in overview.capacity_rows}
    assert rows[("a100", "nvidia.com/gpu")].capacity == 8000
    assert rows[("a100", "nvidia.com/gpu")].admitted == 8000
    assert rows[("default", "cpu")].capacity == 32000
    assert {"team-a", "team-b"} <= {c.namespace for c in overview.consumers}
    assert "Not enough quota" in body and "Blocked behind the StrictFIFO head" in body


def test_given_samples_when_admin_opens_overview_then_every_chart_holds_data(cluster, login):
    response = login("admin").get(reverse("queues:home"))
    figs = figures(response)

    assert set(figs) == {"chart-utilisation", "chart-fairness", "chart-counts", "chart-capacity"}
    for element_id, figure in figs.items():
        assert figure["data"], element_id
        assert any(len(trace.get("x") or trace.get("y") or []) for trace in figure["data"]), element_id
        assert f'id="figure-data-{element_id}"' in response.content.decode()
    fairness = figs["chart-fairness"]["data"][0]["y"]
    assert all(value is None or 0 < value <= 1 for value in fairness)


def test_given_admin_when_overview_opened_then_fairness_now_is_a_jain_index(cluster, login):
    overview = login("admin").get(reverse("queues:home")).context["overview"]

    assert overview.jain_now is not None and 0 < overview.jain_now <= 1


@pytest.mark.parametrize("user", ["alice", "victor"])
def test_given_team_a_member_when_overview_opened_then_only_team_a_is_shown(cluster, login, user):
    response = login(user).get(reverse("queues:home"))
    body = response.content.decode()
    overview = response.context["overview"]

    assert "Your namespaces" in body and "team-a" in body
    assert "team-b" not in body and "team-c" not in body
    assert (overview.admitted, overview.pending) == (1, 3)  # a-job-0 runs; a-job-1, a-job-2, a-batch-0 wait
    assert {c.namespace for c in overview.consumers} <= {"team-a"}
    assert [q.resource for q in overview.quota_use] == ["nvidia.com/gpu"]
    assert set(figures(response)) == {"chart-allocation", "chart-counts"}


def test_given_range_parameter_when_overview_opened_then_it_is_used_and_bad_values_fall_back(cluster, login):
    client = login("admin")

    assert client.get(reverse("queues:home"), {"range": "6h"}).context["range"] == "6h"
    assert (
        client.get(reverse("queues:home"), {"range": "<script>"}).context["range"] == "data"
    )  # the span of the data, the default


def test_given_live_poll_when_overview_refreshes_then_json_carries_fragments_and_figures(cluster, login):
    response = login("admin").get(reverse("queues:home"), {"live": "1"})
    data = json.loads(response.content)

    assert response["Content-Type"] == "application/json"
    assert set(data["fragments"]) == {"overview-kpis", "overview-tables"}
    assert "Admitted workloads" in page_text(data["fragments"]["overview-kpis"])
    assert set(data["figures"]) == {"chart-utilisation", "chart-fairness", "chart-counts", "chart-capacity"}


def test_given_tenant_live_poll_when_overview_refreshes_then_other_tenants_stay_out(cluster, login):
    data = login("alice").get(reverse("queues:home"), {"live": "1"}).content.decode()

    assert "team-b" not in data and "team-c" not in data


def test_given_tenant_when_overview_opened_then_the_starved_summary_names_only_its_own_namespaces(cluster, login):
    starved = login("alice").get(reverse("queues:home")).context["overview"].starved

    assert {tenant.namespace for tenant in starved.tenants} <= {"team-a"}
    assert all(row.lenders == ["other queues"] for row in starved.reclaimable)


def test_given_admin_when_overview_opened_then_it_has_the_starved_and_reclaimable_card(cluster, login):
    body = login("admin").get(reverse("queues:home")).content.decode()

    assert 'id="starved"' in body and "Starved and reclaimable" in page_text(body)
