"""The flat lists as tables (core/tables.py): sorting across pages, column choice, CSV and JSON
exports of the filtered list, tenant isolation of exports, and accessible headers."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.urls import reverse

from core import tables
from core.audit import policy_state, record_change
from queues import services
from queues.models import Workload
from queues.selectors.audit_log import AUDIT_SORTS
from queues.selectors.flavors import FLAVOR_SORTS
from queues.selectors.workloads import ORDERINGS
from queues.tables import AuditTable, FlavorTable, WorkloadTable

pytestmark = pytest.mark.django_db


def names(response) -> list[str]:
    return [row.name for row in response.context["work"].rows]


def csv_rows(response) -> list[dict[str, str]]:
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def headers(body: str) -> list[str]:
    return re.findall(r"<th\b[^>]*>", body)


@pytest.fixture
def many(cluster):
    """30 more workloads in team-b/train, priorities 0..9 three times over: more than a page."""
    for index in range(30):
        services.submit_workload(
            local_queue=cluster.b_train,
            name=f"many-{index:02d}",
            priority=index % 10,
            pod_sets=[{"count": 1, "requests": {"cpu": "1"}}],
        )
    return cluster


def test_given_two_pages_when_sorted_by_priority_then_page_two_continues_the_order(many, login):
    client = login("admin")

    first = client.get(reverse("queues:workloads"), {"sort": "-priority"})
    second = client.get(reverse("queues:workloads"), {"sort": "-priority", "page": 2})

    listed = names(first) + names(second)
    expected = list(Workload.objects.order_by("-priority", "queued_at", "id").values_list("name", flat=True))
    assert len(names(first)) == 25 and first.context["work"].page.paginator.num_pages == 2
    assert listed == expected  # nothing repeated, nothing skipped, one order across the pages
    priorities = [row.priority for row in first.context["work"].rows + second.context["work"].rows]
    assert priorities == sorted(priorities, reverse=True)


def test_given_two_pages_when_sorted_by_name_then_the_pages_hold_the_sorted_list_in_turn(many, login):
    client = login("admin")

    listed = names(client.get(reverse("queues:workloads"), {"sort": "name"})) + names(
        client.get(reverse("queues:workloads"), {"sort": "name", "page": 2})
    )

    assert listed == sorted(Workload.objects.values_list("name", flat=True))


def test_given_a_sorted_page_then_every_header_has_col_scope_and_the_sorted_one_aria_sort(many, login):
    body = (
        login("admin").get(reverse("queues:workloads"), {"namespace": "team-b", "sort": "-priority"}).content.decode()
    )

    ths = headers(body)
    assert ths and all('scope="col"' in th for th in ths)
    assert [th for th in ths if "aria-sort" in th] == [
        next(th for th in ths if 'aria-sort="descending"' in th)
    ]  # exactly one sorted column, descending
    # the sorted header links to the other direction, keeps the filter, and starts at page 1
    link = re.search(r'aria-sort="descending"><a class="sort" href="\?([^"]+)"', body)
    assert link and link.group(1) == "namespace=team-b&amp;sort=priority"
    assert re.search(r'<a class="sort" href="\?namespace=team-b&amp;sort=name"[^>]*>Workload</a>', body)


def test_given_the_pending_list_then_it_is_in_queue_order_and_the_position_header_says_so(cluster, login):
    response = login("admin").get(reverse("queues:workloads"), {"state": "Pending"})
    body = response.content.decode()

    rows = response.context["work"].rows
    by_queue: dict[str, list[int]] = {}
    for row in rows:
        by_queue.setdefault(row.cluster_queue, []).append(row.position)
    assert all(positions == sorted(positions) for positions in by_queue.values())
    assert re.search(r'<th scope="col" class="[^"]*" aria-sort="ascending"><a class="sort"[^>]*>Position</a>', body)


def test_given_an_unknown_sort_then_the_default_order_is_used(cluster, login):
    response = login("admin").get(reverse("queues:workloads"), {"sort": "-password"})

    assert response.status_code == 200 and response.context["work"].sort == "newest"
    assert "aria-sort" not in response.content.decode()  # newest first is not a column's order


def test_given_a_column_choice_then_it_is_remembered_until_reset(cluster, login):
    client = login("alice")
    url = reverse("queues:workloads")

    chosen = client.get(url, {"columns": ["state", "position"]}).content.decode()
    later = client.get(url).content.decode()
    reset = client.get(url, {"columns": "default"}).content.decode()

    for body in (chosen, later):
        shown = re.findall(r'<th scope="col"[^>]*>(?:<a[^>]*>)?([^<]+)', body)
        assert shown == ["Workload", "State", "Position"]  # the workload's name cannot be hidden
    assert ">Priority</a>" in reset and ">Queued</a>" in reset and "Why it waits" in reset


def test_given_a_column_form_then_it_keeps_the_filters_and_offers_every_optional_column(cluster, login):
    body = login("admin").get(reverse("queues:workloads"), {"namespace": "team-b", "sort": "priority"}).content.decode()

    form = body[body.index('class="columns-form"') : body.index("</form>", body.index('class="columns-form"'))]
    assert '<input type="hidden" name="namespace" value="team-b">' in form
    assert '<input type="hidden" name="sort" value="priority">' in form
    assert '<input type="hidden" name="columns" value="name">' in form
    offered = re.findall(r'type="checkbox" name="columns" value="([a-z_]+)"', form)
    assert offered == ["queue", "cluster", "state", "priority", "requests", "position", "reason", "queued"]


def test_given_a_filtered_list_when_exported_as_csv_then_the_file_holds_those_rows_in_order(many, login):
    response = login("admin").get(
        reverse("queues:workloads"), {"namespace": "team-b", "priority_min": "8", "sort": "-priority", "export": "csv"}
    )

    rows = csv_rows(response)
    expected = Workload.objects.filter(namespace__name="team-b", priority__gte=8).order_by(
        "-priority", "queued_at", "id"
    )
    assert [row["Workload"] for row in rows] == [w.name for w in expected]
    assert {row["Namespace"] for row in rows} == {"team-b"}
    assert rows[0]["Priority"] == "9" and rows[0]["Queue"] == "team-b/train" and rows[0]["ClusterQueue"] == "cq-gpu"
    assert rows[0]["Requests"] == "1 CPU" and rows[0]["State"] == "Pending"
    assert response["Content-Disposition"] == 'attachment; filename="workloads.csv"'
    assert response["X-Export-Truncated"] == "false" and response["X-Export-Total"] == str(len(rows))


def test_given_pending_work_when_exported_as_json_then_rows_carry_position_and_reason(cluster, login):
    data = login("admin").get(reverse("queues:workloads"), {"state": "Pending", "export": "json"}).json()

    rows = {row["name"]: row for row in data["rows"]}
    assert data["count"] == data["total"] == len(rows) == 6 and data["truncated"] is False
    assert rows["a-batch-0"]["position"] == 2 and rows["a-batch-0"]["cluster_queue"] == "cq-cpu"
    assert rows["a-batch-0"]["reason_code"] == "BlockedByStrictFIFOHead"
    assert rows["a-batch-0"]["reason"].startswith("ClusterQueue cq-cpu is StrictFIFO")
    assert rows["a-job-1"]["queued"].startswith("20") and rows["a-job-1"]["admitted_at"] is None
    assert [c["name"] for c in data["columns"]][:3] == ["name", "namespace", "queue"]
    order = [(row["cluster_queue"], row["position"]) for row in data["rows"]]
    assert order == sorted(order)  # the page's queue order


def test_given_a_tenant_when_exporting_then_no_other_tenants_rows_or_names_come_out(cluster, login):
    client = login("alice")

    everything = csv_rows(client.get(reverse("queues:workloads"), {"export": "csv"}))
    asked_for_b = client.get(reverse("queues:workloads"), {"namespace": "team-b", "export": "json"}).json()
    pending = client.get(reverse("queues:workloads"), {"state": "Pending", "export": "json"}).content.decode()

    assert everything and {row["Namespace"] for row in everything} == {"team-a"}
    assert asked_for_b["rows"] == [] and asked_for_b["total"] == 0
    assert "team-b" not in pending and "team-c" not in pending and "c-huge" not in pending


def test_given_more_rows_than_the_cap_when_exported_then_the_export_stops_and_says_so(cluster, login, monkeypatch):
    monkeypatch.setattr(tables, "EXPORT_LIMIT", 3)
    client = login("admin")

    data = client.get(reverse("queues:workloads"), {"export": "json"}).json()
    response = client.get(reverse("queues:workloads"), {"export": "csv"})

    assert data["count"] == 3 and data["limit"] == 3 and data["total"] == Workload.objects.count()
    assert data["truncated"] is True
    assert len(csv_rows(response)) == 3 and response["X-Export-Truncated"] == "true"


def test_given_an_unknown_export_format_then_400_names_the_parameter(cluster, login):
    response = login("admin").get(reverse("queues:workloads"), {"export": "xlsx<script>"})

    assert response.status_code == 400
    assert response.content.decode() == "export: choose one of csv, json"


def test_given_audit_changes_when_sorted_and_exported_then_a_tenant_gets_only_its_own(cluster, login):
    for obj, surface in ((cluster.a_train, "ui"), (cluster.b_train, "api"), (cluster.cq_gpu, "admin")):
        before = policy_state(obj)
        obj.description = f'=HYPERLINK("http://x") {obj.pk}'
        obj.save()
        record_change(instance=obj, action="update", before=before, after=policy_state(obj), surface=surface)

    admin = login("admin")
    by_surface = admin.get(reverse("queues:audit-log"), {"sort": "surface"})
    exported = csv_rows(admin.get(reverse("queues:audit-log"), {"sort": "surface", "export": "csv"}))
    client = login("victor")
    tenant = client.get(reverse("queues:audit-log"), {"export": "json"}).json()

    assert [row.change.surface for row in by_surface.context["audit"].rows] == ["admin", "api", "ui"]
    assert [row["Surface"] for row in exported] == ["admin", "api", "ui"]
    assert exported[0]["Change"].startswith("description: — → =HYPERLINK")
    assert exported[0]["Object"] == "clusterqueue cq-gpu"
    assert [row["object"] for row in tenant["rows"]] == ["localqueue team-a/train"]
    assert "team-b" not in str(tenant) and "cq-gpu" not in str(tenant)


def test_given_flavors_when_sorted_by_running_and_exported_then_figures_come_out(cluster, login):
    client = login("admin")

    response = client.get(reverse("queues:flavors"), {"sort": "-running"})
    data = client.get(reverse("queues:flavors"), {"sort": "-running", "export": "json"}).json()

    running = [s.running for s in response.context["flavors"]]
    assert running == sorted(running, reverse=True)
    assert [row["flavor"] for row in data["rows"]] == [s.flavor.name for s in response.context["flavors"]]
    a100 = next(row for row in data["rows"] if row["flavor"] == "a100")
    summary = next(s for s in response.context["flavors"] if s.flavor.name == "a100")
    assert a100["running"] == summary.running > 0
    assert a100["capacity"] == "; ".join(f"{c.resource}: {c.text('nominal')}" for c in summary.totals)
    assert "nvidia.com/gpu: " in a100["capacity"]
    assert 'aria-sort="descending"' in response.content.decode()


def test_given_budgets_when_sorted_filtered_and_exported_then_a_tenant_sees_its_own(cluster, login):
    admin = login("admin")
    listed = admin.get(reverse("budgets:list"), {"sort": "-name"})
    exported = csv_rows(admin.get(reverse("budgets:list"), {"kind": "WallTime", "export": "csv"}))
    bob = login("bob")
    own = bob.get(reverse("budgets:list"), {"export": "json"}).json()

    assert [b.name for b, _status in listed.context["rows"]] == ["b-wall-time", "a-gpu-hours"]
    assert [row["Budget"] for row in exported] == ["b-wall-time"]
    assert exported[0]["Target"] == "LocalQueue team-b/train" and exported[0]["Allocated"] == "10.0"
    assert [row["name"] for row in own["rows"]] == ["b-wall-time"] and own["total"] == 1


def test_every_sortable_column_has_an_order_in_its_selector():
    assert WorkloadTable.sortable() <= set(ORDERINGS)
    assert AuditTable.sortable() == set(AUDIT_SORTS)
    assert FlavorTable.sortable() == set(FLAVOR_SORTS)
    from budgets.selectors import BUDGET_SORTS
    from budgets.tables import BudgetTable

    assert BudgetTable.sortable() == set(BUDGET_SORTS)


def test_given_a_cell_a_spreadsheet_would_run_when_exported_as_csv_then_it_is_quoted_as_text():
    import django_tables2 as dt2

    class Plain(tables.ListTable):
        key = "plain"
        text = dt2.Column()

    rows = [{"text": "=1+2"}, {"text": -300}, {"text": "@SUM(A1)"}, {"text": "plain"}]
    response = tables.export_response(Plain(rows), "csv", total=4)

    assert [row["Text"] for row in csv_rows(response)] == ["'=1+2", "-300", "'@SUM(A1)", "plain"]


def test_given_a_column_choice_then_a_queue_page_shows_its_workloads_with_the_same_columns(cluster, login):
    client = login("alice")
    client.get(reverse("queues:workloads"), {"columns": ["state", "reason"]})

    response = client.get(reverse("queues:local-queue", args=["team-a", "train"]), {"sort": "-priority"})
    body = response.content.decode()
    table = body[body.index('<table class="grid workloads">') :]
    table = table[: table.index("</thead>")]

    assert re.findall(r'<th scope="col"[^>]*>(?:<a[^>]*>)?([^<]+)', table) == [
        "Workload",
        "State",
        "Why it waits · who is ahead",
    ]
    assert response.context["work"].sort == "-priority"  # a queue page sorts like the list
