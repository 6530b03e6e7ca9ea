"""The cluster pages, the overview's clusters table, the cluster column and filter of the
workload and flavor tables, and the API agreeing with the pages (``tests.queues.two_clusters``:
east reachable, west a real Slurm backend that does not answer)."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from core.models import PolicyChange
from queues.models import Cluster, ResourceFlavor, Workload, WorkloadState
from queues.ui.display import amount
from tests.queues.loop_fixtures import make_local_queue, submit
from tests.queues.two_clusters import build_two_clusters
from tests.queues.views.cluster import page_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def two():
    cache.clear()
    return build_two_clusters()


def row_of(body: str, name: str) -> str:
    match = re.search(rf'<tr data-cluster="{name}"[^>]*>.*?</tr>', body, re.S)
    assert match, f"no row for {name}"
    return match.group(0)


def cell(row: str, css: str) -> str:
    match = re.search(rf'<td class="[^"]*\b{css}\b[^"]*">(.*?)</td>', row, re.S)
    assert match, css
    return page_text(match.group(1))


def csv_rows(response) -> list[dict[str, str]]:
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


# --- the overview and the list ------------------------------------------------------------------


def test_given_two_clusters_when_an_admin_opens_the_overview_then_each_has_its_figures_and_west_is_unreachable(
    two, login
):
    body = login("admin").get(reverse("queues:home")).content.decode()

    table = body[body.index('id="clusters-table"') :]
    east, west = row_of(table, "east"), row_of(table, "west")
    assert 'data-health="reachable"' in east and 'data-health="unreachable"' in west
    assert cell(east, "capacity") == "14 CPU" and cell(east, "admitted") == "12 CPU"
    assert cell(east, "admitted-workloads") == "4" and cell(east, "pending") == "1 · 2"
    assert cell(west, "capacity") == "4 CPU" and cell(west, "pending") == "1 · 2"
    assert "86%" in cell(east, "utilisation")  # 12 of 14 CPU
    assert "Cluster west (backend slurm) unreachable" in page_text(body)  # the banner, with the last error
    assert "squeue not found" in page_text(body)


def test_given_a_tenant_when_it_opens_the_cluster_list_then_it_sees_its_own_figures_and_no_other_tenant(two, login):
    body = login("alice").get(reverse("queues:clusters")).content.decode()

    east = row_of(body, "east")
    assert cell(east, "capacity") == "4 CPU" and cell(east, "admitted") == "4 CPU"
    assert cell(east, "admitted-workloads") == "2" and cell(east, "pending") == "0 · 1"
    text = page_text(body)
    assert "team-b" not in text and "east-only" not in text and "east-big" not in text
    assert "squeue not found" not in text  # the last error is for admins
    assert 'data-hook="add-cluster"' not in body


def test_given_a_tenant_when_it_opens_a_cluster_page_then_no_connection_and_no_error_are_shown(two, login):
    body = login("alice").get(reverse("queues:cluster", args=["west"])).content.decode()

    text = page_text(body)
    assert "Unreachable" in text and "squeue not found" not in text
    assert "/nonexistent/slurm" not in text and 'id="cluster-connection"' not in body
    assert login("alice").get(reverse("queues:cluster", args=["nowhere"])).status_code == 404


def test_given_an_admin_on_a_rest_cluster_page_then_the_token_reference_is_never_shown_in_full(two, login):
    Cluster.objects.create(
        name="cloud", backend="slurm", slurm_transport="rest", rest_url="http://127.0.0.1:6820",
        rest_secret="env:CLOUD_SLURM_JWT", rest_user="fairportal",
    )  # fmt: skip
    client = login("admin")

    page = client.get(reverse("queues:cluster", args=["cloud"])).content.decode()
    form = client.get(reverse("queues:edit-cluster", args=["cloud"])).content.decode()

    assert "http://127.0.0.1:6820" in page and "env:… (set)" in page_text(page)
    assert "CLOUD_SLURM_JWT" not in page and "CLOUD_SLURM_JWT" not in form


# --- add, edit, delete ----------------------------------------------------------------------------


def test_given_an_admin_when_a_cluster_is_added_and_edited_then_each_write_is_audited_and_the_reference_kept(
    two, login
):
    client = login("admin")
    added = client.post(
        reverse("queues:add-cluster"),
        {"name": "north", "backend": "slurm", "slurm_transport": "rest", "rest_url": "http://127.0.0.1:6821",
         "rest_secret": "file:/etc/fairportal/north.jwt", "flavor_partitions": "{}", "account_queues": "{}",
         "enabled": "on"},
    )  # fmt: skip
    assert added.status_code == 302, page_text(added.content.decode())[:500]
    north = Cluster.objects.get(name="north")
    assert north.rest_secret == "file:/etc/fairportal/north.jwt"

    edited = client.post(
        reverse("queues:edit-cluster", args=["north"]),
        {"description": "the new one", "backend": "slurm", "slurm_transport": "rest",
         "rest_url": "http://127.0.0.1:6821", "rest_secret": "", "flavor_partitions": "{}",
         "account_queues": "{}", "enabled": "on"},
    )  # fmt: skip
    assert edited.status_code == 302
    north.refresh_from_db()
    assert north.description == "the new one"
    assert north.rest_secret == "file:/etc/fairportal/north.jwt"  # empty keeps the stored reference
    cleared = client.post(
        reverse("queues:edit-cluster", args=["north"]),
        {"description": "the new one", "backend": "slurm", "slurm_transport": "rest",
         "rest_url": "http://127.0.0.1:6821", "rest_secret": "", "clear_rest_secret": "on",
         "flavor_partitions": "{}", "account_queues": "{}", "enabled": "on"},
    )  # fmt: skip
    assert cleared.status_code == 302
    north.refresh_from_db()
    assert north.rest_secret == ""
    changes = PolicyChange.objects.filter(object_type="cluster", object_id=str(north.pk)).order_by("id")
    assert [(c.action, c.surface) for c in changes] == [("create", "ui"), ("update", "ui"), ("update", "ui")]


def test_given_a_bad_connection_when_added_then_the_form_names_the_field_and_nothing_is_written(two, login):
    response = login("admin").post(
        reverse("queues:add-cluster"),
        {"name": "bad", "backend": "slurm", "slurm_conf": "relative/slurm.conf", "flavor_partitions": "{}",
         "account_queues": "{}"},
    )  # fmt: skip

    assert response.status_code == 400
    assert "absolute path" in page_text(response.content.decode())
    assert not Cluster.objects.filter(name="bad").exists()


def test_given_flavors_and_admitted_work_on_a_cluster_when_deleted_then_refused_listing_what_depends(two, login):
    client = login("admin")
    page = client.get(reverse("queues:delete-cluster", args=["east"])).content.decode()
    assert "east-cpu" in page_text(page)

    refused = client.post(reverse("queues:delete-cluster", args=["east"]))

    assert refused.status_code == 409
    text = page_text(refused.content.decode())
    assert "was not deleted" in text and "east-big" in text and "admitted" in text
    assert Cluster.objects.filter(name="east").exists()


def test_given_an_unused_cluster_when_deleted_then_it_is_gone_and_audited_but_the_default_is_refused(two, login):
    spare = Cluster.objects.create(name="spare", backend="simulated")
    client = login("admin")

    assert client.post(reverse("queues:delete-cluster", args=["spare"])).status_code == 302
    assert not Cluster.objects.filter(name="spare").exists()
    assert PolicyChange.objects.filter(object_type="cluster", object_id=str(spare.pk), action="delete").exists()
    refused = client.post(reverse("queues:delete-cluster", args=["default"]))
    assert refused.status_code == 409 and "default cluster" in page_text(refused.content.decode())


@pytest.mark.parametrize("name", ["queues:edit-cluster", "queues:delete-cluster"])
def test_given_a_tenant_when_it_opens_an_admin_page_of_a_cluster_then_403_and_nothing_changes(two, login, name):
    client = login("alice")
    assert client.get(reverse(name, args=["east"])).status_code == 403
    assert client.post(reverse(name, args=["east"]), {"description": "mine"}).status_code == 403
    assert client.get(reverse("queues:add-cluster")).status_code == 403
    assert Cluster.objects.get(name="east").description == "the simulated one"


def test_given_an_admin_when_a_flavor_is_added_on_a_cluster_then_it_belongs_there(two, login):
    east = Cluster.objects.get(name="east")
    response = login("admin").post(reverse("queues:add-flavor"), {"name": "east-gpu", "cluster": str(east.pk)})

    assert response.status_code == 302
    assert ResourceFlavor.objects.get(name="east-gpu").cluster == east


# --- the tables' cluster column and filter -------------------------------------------------------


def test_given_a_cluster_filter_then_the_workload_list_and_its_csv_hold_that_clusters_workloads_only(two, login):
    client = login("admin")
    body = client.get(reverse("queues:workloads"), {"cluster": "west"}).content.decode()
    exported = csv_rows(client.get(reverse("queues:workloads"), {"cluster": "east", "export": "csv"}))

    assert "imported" in page_text(body) and "a-0" not in page_text(body)  # bound to west: its job is there
    on_east = set(Workload.objects.filter(cluster__name="east").values_list("name", flat=True))
    assert {row["Workload"] for row in exported} == on_east
    assert {row["Cluster"] for row in exported} == {"east"}
    assert '<option value="west" selected>' in body


def test_given_a_tenant_when_it_filters_workloads_by_cluster_then_only_its_own_appear(two, login):
    exported = csv_rows(login("alice").get(reverse("queues:workloads"), {"cluster": "east", "export": "csv"}))

    assert sorted(row["Workload"] for row in exported) == ["a-0", "a-1"]  # team-b's on east are not hers
    assert {row["Namespace"] for row in exported} == {"team-a"}


def test_given_a_cluster_filter_then_the_flavor_list_and_its_export_hold_that_clusters_flavors(two, login):
    client = login("admin")
    body = client.get(reverse("queues:flavors"), {"cluster": "east"}).content.decode()
    exported = client.get(reverse("queues:flavors"), {"cluster": "west", "export": "json"}).json()

    assert "east-big" in body and "east-cpu" in body and "west-cpu" not in body
    detail = client.get(reverse("queues:flavor", args=["west-cpu"])).content.decode()
    assert f'href="{reverse("queues:cluster", args=["west"])}" id="flavor-cluster">west</a>' in detail
    assert [(row["flavor"], row["cluster"]) for row in exported["rows"]] == [("west-cpu", "west")]


# --- the API and the pages agree ------------------------------------------------------------------


def shown(quantities: dict[str, float]) -> str:
    """The API's base-unit figures as the page writes them."""
    return " ".join(amount(round(value * 1000), resource) for resource, value in quantities.items())


@pytest.mark.parametrize("username", ["admin", "alice"])
def test_given_the_clusters_api_then_its_figures_are_the_pages(two, login, username):
    from django.contrib.auth import get_user_model

    api = APIClient()
    api.force_authenticate(get_user_model().objects.get(username=username))
    rows = {row["name"]: row for row in api.get("/api/v1/clusters/").json()["results"]}
    body = login(username).get(reverse("queues:clusters")).content.decode()

    for name in ("default", "east", "west"):
        figures, row = rows[name]["figures"], row_of(body, name)
        assert cell(row, "capacity") == shown(figures["capacity"]) == " ".join(figures["capacity_display"])
        assert cell(row, "admitted") == shown(figures["admitted"]) == " ".join(figures["admitted_display"])
        assert cell(row, "admitted-workloads") == str(figures["admitted_workloads"])
        assert cell(row, "pending") == f"{figures['pending_only_here']} · {figures['pending_could_run']}"
        assert f'data-health="{figures["health"]["state"]}"' in row
    assert rows["west"]["figures"]["health"]["backing_off"] is True
    if username == "alice":
        assert rows["east"]["figures"]["capacity"] == {"cpu": 4}


def test_given_more_work_then_the_cluster_pages_cost_the_same_queries(two, login):
    client = login("admin")

    def count(url: str) -> int:
        cache.clear()
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured.captured_queries)

    urls = [reverse("queues:clusters"), reverse("queues:cluster", args=["east"])]
    before = [count(url) for url in urls]
    for index in range(8):
        lq = make_local_queue(f"more-{index}", "main", two.spread)
        for job in range(3):
            submit(lq, f"m-{job}", cpu="1")
    assert Workload.objects.filter(state=WorkloadState.PENDING).count() > 20
    assert [count(url) for url in urls] == before


def test_given_more_clusters_and_work_then_the_clusters_api_costs_the_same_queries(two):
    from django.contrib.auth import get_user_model

    api = APIClient()
    api.force_authenticate(get_user_model().objects.get(username="alice"))

    def count() -> int:
        cache.clear()
        with CaptureQueriesContext(connection) as captured:
            assert api.get("/api/v1/clusters/").status_code == 200
        return len(captured.captured_queries)

    before = count()
    for index in range(5):
        extra = Cluster.objects.create(name=f"extra-{index}", backend="simulated")
        ResourceFlavor.objects.create(name=f"extra-{index}-cpu", cluster=extra)
        submit(make_local_queue("team-a", f"more-{index}", two.spread), f"x-{index}", cpu="1")
    assert count() == before
