"""The workload list and page: filters, position, the reason as a sentence, who is ahead."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def rows(response) -> dict[str, object]:
    return {row.name: row for row in response.context["work"].rows}


def test_given_pending_filter_when_admin_lists_then_queue_order_and_reasons_are_shown(cluster, login):
    response = login("admin").get(reverse("queues:workloads"), {"state": "Pending"})
    listed = rows(response)

    assert response.context["work"].sort == "position"
    assert set(listed) == {"a-job-1", "a-job-2", "b-job-1", "b-job-2", "c-huge", "a-batch-0"}
    assert listed["a-batch-0"].position == 2
    assert listed["a-batch-0"].reason_title == "Blocked behind the StrictFIFO head"
    assert listed["a-batch-0"].reason.startswith("ClusterQueue cq-cpu is StrictFIFO") and listed[
        "a-batch-0"
    ].reason.endswith(".")
    assert listed["a-job-1"].reason.startswith("Insufficient quota for nvidia.com/gpu")


def test_given_pending_workload_when_listed_then_queues_ahead_are_counted_with_why(cluster, login):
    listed = rows(login("admin").get(reverse("queues:workloads"), {"state": "Pending"}))

    last = listed["b-job-2"]  # position 4 in cq-gpu: a-job-1, a-job-2 and b-job-1 are ahead
    assert last.position == 4
    ahead = {item.label: item for item in last.ahead}
    assert ahead["team-a/train"].count == 2 and "usage score" in ahead["team-a/train"].why
    assert ahead["the same LocalQueue"].count == 1
    assert sum(item.count for item in last.ahead) + last.ahead_more == 3
    head = listed["a-batch-0"]
    assert [(item.label, item.count) for item in head.ahead] == [("team-c/etl", 1)]
    assert "no admission fair sharing" in head.ahead[0].why


def test_given_tenant_when_listing_then_other_tenants_queues_ahead_are_anonymous(cluster, login):
    response = login("alice").get(reverse("queues:workloads"), {"state": "Pending"})
    body = response.content.decode()
    listed = rows(response)

    assert set(listed) == {"a-job-1", "a-job-2", "a-batch-0"}
    head = listed["a-batch-0"]
    assert [(item.label, item.count) for item in head.ahead] == [("another tenant's queues", 1)]
    assert "team-c" not in body and "c-huge" not in body and "team-b" not in body
    assert "another tenant&#x27;s queue" in body


def test_given_filters_when_listing_then_they_narrow_the_list(cluster, login):
    client = login("admin")

    assert set(rows(client.get(reverse("queues:workloads"), {"namespace": "team-b"}))) == {
        "b-job-0",
        "b-job-1",
        "b-job-2",
    }
    assert set(rows(client.get(reverse("queues:workloads"), {"local_queue": "team-a/batch"}))) == {"a-batch-0"}
    assert set(rows(client.get(reverse("queues:workloads"), {"cluster_queue": "cq-cpu"}))) == {"c-huge", "a-batch-0"}
    assert set(rows(client.get(reverse("queues:workloads"), {"pending_reason": "BlockedByStrictFIFOHead"}))) == {
        "a-batch-0"
    }
    assert set(rows(client.get(reverse("queues:workloads"), {"state": "Admitted"}))) == {"a-job-0", "b-job-0"}


def test_given_invalid_filter_when_listing_then_nothing_is_listed_and_the_error_is_shown(cluster, login):
    response = login("admin").get(reverse("queues:workloads"), {"state": "Exploded"})

    assert response.status_code == 200
    assert rows(response) == {}
    assert "Exploded" in response.content.decode()


def test_given_tenant_filtering_for_another_namespace_when_listing_then_nothing_leaks(cluster, login):
    assert rows(login("alice").get(reverse("queues:workloads"), {"namespace": "team-b"})) == {}


def test_given_many_workloads_when_listing_then_pages_keep_filters(cluster, login):
    response = login("admin").get(reverse("queues:workloads"), {"namespace": "team-b", "page": "1"})
    body = response.content.decode()

    assert response.context["work"].page.paginator.count == 3
    assert "1–3 of 3 workloads" in body


def test_given_pending_workload_when_opened_then_reason_position_and_ahead_are_explained(cluster, login):
    response = login("victor").get(reverse("queues:workload", args=["team-a", "a-batch-0"]))
    body = response.content.decode()

    assert response.context["row"].position == 2
    assert "Why it waits" in body and "Who is ahead" in body
    assert "another tenant&#x27;s queue" in body and "team-c" not in body


def test_given_admitted_workload_when_opened_then_admission_history_is_shown(cluster, login):
    response = login("admin").get(reverse("queues:workload", args=["team-b", "b-job-0"]))
    body = response.content.decode()

    assert response.context["detail"].admissions
    assert "admitted to cq-gpu" in body and "running" in body
    assert "Pod sets" in body and "4 GPU" in body


def test_given_live_poll_when_workload_list_refreshes_then_table_fragment_comes_back(cluster, login):
    data = login("admin").get(reverse("queues:workloads"), {"state": "Pending", "live": "1"}).json()

    assert set(data["fragments"]) == {"workload-table"}
    assert "a-batch-0" in data["fragments"]["workload-table"]


def test_given_tenant_when_workload_list_opened_then_filters_are_dropdowns_of_its_own_names(cluster, login):
    body = login("alice").get(reverse("queues:workloads")).content.decode()
    options = login("alice").get(reverse("queues:workloads")).context["options"]

    assert options.namespaces == ["team-a"]
    assert set(options.local_queues) == {"team-a/train", "team-a/batch"}
    assert '<select name="namespace"' in body and '<select name="pending_reason"' in body
    assert "team-b" not in " ".join(options.local_queues + options.namespaces)


def test_given_admin_when_tree_opened_then_the_cluster_queue_filter_lists_every_cluster_queue(cluster, login):
    body = login("admin").get(reverse("queues:queue-tree") + "?cluster_queue=cq-gpu").content.decode()

    assert '<option value="cq-gpu" selected>' in body and '<option value="cq-cpu" >' in body


def test_given_a_workload_preempted_by_another_tenant_when_its_page_opens_then_nobody_else_is_named(cluster, login):
    from django.utils import timezone

    from fairshare.admission import reasons
    from queues.models import Workload, WorkloadReason
    from queues.services import transitions

    evicted = Workload.objects.get(name="a-job-0")
    message = "Preempted: " + reasons.preempted("team-b/b-job-0", "(reclaimWithinCohort)")
    assert transitions.evict(workload_id=evicted.pk, now=timezone.now(), message=message)
    WorkloadReason.objects.filter(workload_id=evicted.pk).update(code="")  # as after the next pass, before a reason
    url = reverse("queues:workload", args=["team-a", "a-job-0"])

    tenant = login("alice").get(url).content.decode()
    admin = login("admin").get(url).content.decode()

    assert "preempted by another tenant&#x27;s workload" in tenant
    assert "team-b" not in tenant and "b-job-0" not in tenant
    assert "preempted by team-b/b-job-0" in admin
