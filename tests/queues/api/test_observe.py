"""``/api/v1/shares/`` (sshare) and ``/api/v1/priority/`` (sprio): fixed query counts, the
tenant's view (its rows only; another tenant's workload is a 404, its queues unnamed), and the
numbers against the stored queue order."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from queues.models import LocalQueue
from queues.services import submit_workload
from tests.queues.api.conftest import World, client_for, pod_sets

pytestmark = pytest.mark.django_db

SMALL, LARGE = 5, 25
MOST_QUERIES = 14  # token and roles (4), count, page, the structure (5), and 3: usage, counts, heads (shares) or order, ahead, queues (priority)


def admission_pass() -> None:
    from io import StringIO

    call_command("admission_pass", stdout=StringIO())


def grow_local_queues(world: World, start: int, stop: int) -> None:
    for i in range(start, stop):
        lq = LocalQueue.objects.create(namespace=world.ns_a, name=f"lq-{i}", cluster_queue=world.cluster_queue)
        for j in range(2):
            submit_workload(local_queue=lq, name=f"lq-{i}-work-{j}", pod_sets=pod_sets(cpu="40"))  # never fits
    admission_pass()


def grow_workloads(world: World, start: int, stop: int) -> None:
    for i in range(start, stop):
        lq = world.lq_a if i % 2 else world.lq_b
        submit_workload(local_queue=lq, name=f"work-{i}", pod_sets=pod_sets(cpu="40"))
    admission_pass()


GROWERS: dict[str, Callable[[World, int, int], None]] = {"shares": grow_local_queues, "priority": grow_workloads}


@pytest.mark.parametrize("role", ["admin", "viewer_a"])
@pytest.mark.parametrize("prefix", list(GROWERS))
def test_given_more_rows_when_listing_then_the_query_count_stays_the_same(
    world, prefix, role, django_assert_max_num_queries
):
    client = client_for(world.users[role])
    url = f"/api/v1/{prefix}/?page_size=100"
    GROWERS[prefix](world, 0, SMALL)
    with CaptureQueriesContext(connection) as small:
        small_page = client.get(url)
    assert small_page.status_code == 200
    assert len(small) <= MOST_QUERIES

    GROWERS[prefix](world, SMALL, LARGE)
    with django_assert_max_num_queries(len(small)):
        large_page = client.get(url)

    grown = LARGE - SMALL if prefix == "shares" or role == "admin" else (LARGE - SMALL) // 2
    assert large_page.json()["count"] >= small_page.json()["count"] + grown


def test_given_a_tenant_then_shares_list_only_its_namespaces(world):
    admission_pass()
    rows = client_for(world.users["viewer_a"]).get("/api/v1/shares/").json()["results"]
    everything = client_for(world.users["admin"]).get("/api/v1/shares/").json()["results"]

    assert {row["namespace"] for row in rows} == {"team-a"}
    assert {row["local_queue"] for row in everything} == {lq.key for lq in LocalQueue.objects.all()}


def test_given_pending_work_then_priority_lists_it_in_queue_order_with_who_is_ahead(world):
    for i in range(3):
        submit_workload(local_queue=world.lq_b, name=f"b-big-{i}", pod_sets=pod_sets(cpu="40"))
    submit_workload(local_queue=world.lq_a, name="a-big", pod_sets=pod_sets(cpu="40"))
    admission_pass()
    admin = client_for(world.users["admin"]).get("/api/v1/priority/?state=Pending").json()["results"]
    positions = [row["queue_position"] for row in admin]
    assert positions == sorted(positions) and None not in positions

    mine = client_for(world.users["viewer_a"])
    target = next(row for row in mine.get("/api/v1/priority/?workload=team-a/a-big").json()["results"])
    detail = mine.get(f"/api/v1/priority/{target['id']}/").json()
    assert detail["workload"] == "team-a/a-big" and detail["reason"]["code"]
    ahead = sum(item["count"] for item in detail["ahead"]) + detail["ahead_more"]
    assert ahead == detail["queue_position"] - 1
    assert all(item["local_queue"] in ("team-a/main", "another tenant's queues") for item in detail["ahead"])
    assert "team-b" not in str(detail)


def test_given_another_tenants_workload_then_priority_is_a_404(world):
    tenant_b = client_for(world.users["tenant_b"])

    assert tenant_b.get(f"/api/v1/priority/{world.pending_a.pk}/").status_code == 404
    assert tenant_b.get("/api/v1/priority/?workload=team-a/a-pending").json()["count"] == 0
    assert tenant_b.get(f"/api/v1/priority/{world.pending_b.pk}/").status_code == 200


def test_given_an_admitted_workload_then_priority_says_it_does_not_wait(world):
    detail = client_for(world.users["admin"]).get(f"/api/v1/priority/{world.admitted_a.pk}/").json()

    assert detail["state"] == "Admitted"
    assert detail["reason"] is None and detail["queue_position"] is None and detail["ahead"] == []
