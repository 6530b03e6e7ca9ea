"""Pages cost a fixed number of queries: the same count with ten times more queues and
workloads (no N+1), and under a ceiling (``django_assert_max_num_queries``)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from core.models import TenantMembership
from queues import services
from queues.admission.passes import run_all_admission_passes
from queues.models import LocalQueue, Namespace
from queues.services.usage import sample_usage

pytestmark = pytest.mark.django_db

PAGES = [
    ("admin", "queues:home", []),
    ("admin", "queues:queue-tree", []),
    ("admin", "queues:workloads", []),
    ("admin", "queues:workloads?state=Pending", []),
    ("admin", "queues:workloads?sort=-priority&columns=name&columns=state", []),
    ("admin", "queues:workloads?namespace=team-a&export=csv", []),
    ("admin", "budgets:list?sort=-percent", []),
    ("admin", "queues:cohort", ["org"]),
    ("admin", "queues:cluster-queue", ["cq-gpu"]),
    ("admin", "queues:namespace", ["team-a"]),
    ("admin", "queues:local-queue", ["team-a", "train"]),
    ("admin", "queues:workload", ["team-a", "a-job-2"]),
    ("admin", "queues:audit-log", []),
    ("admin", "queues:audit-log?sort=who&export=json", []),
    ("admin", "queues:edit-cluster-queue", ["cq-gpu"]),
    ("admin", "queues:flavors", []),
    ("admin", "queues:flavor", ["default"]),
    ("admin", "queues:clusters", []),
    ("admin", "queues:cluster", ["default"]),
    ("admin", "queues:edit-cluster", ["default"]),
    ("alice", "queues:home", []),
    ("alice", "queues:queue-tree", []),
    ("alice", "queues:workloads?state=Pending", []),
    ("alice", "queues:local-queue", ["team-a", "train"]),
    ("alice", "queues:flavors", []),
    ("alice", "queues:submit-choose", []),
    ("alice", "queues:submit-workload", ["team-a", "train"]),
    ("alice", "queues:cancel-workload", ["team-a", "a-job-1"]),
    ("alice", "queues:flavors?sort=-running", []),
    ("alice", "queues:clusters", []),
    ("alice", "queues:cluster", ["default"]),
    ("alice", "budgets:list", []),
]
CEILING = 40


def url_of(name: str, args: list[str]) -> str:
    name, _, query = name.partition("?")
    return reverse(name, args=args) + (f"?{query}" if query else "")


def count_queries(client, url: str) -> int:
    cache.clear()  # count the queries of a page built from scratch, not from shared aggregates
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured.captured_queries)


def grow(cluster) -> None:
    """Ten times the queues and workloads: new tenants in both ClusterQueues, more pending work,
    alice made a member of some of them, then a pass and a sample so everything has state."""
    start = timezone.now() - timedelta(minutes=30)
    alice = TenantMembership.objects.filter(namespace=cluster.team_a, role="editor").get().user
    for index in range(20):
        namespace = Namespace.objects.create(name=f"grown-{index}")
        if index % 4 == 0:
            TenantMembership.objects.create(user=alice, namespace=namespace, role="viewer")
        for cq in (cluster.cq_gpu, cluster.cq_cpu):
            lq = LocalQueue.objects.create(namespace=namespace, name=f"q-{cq.name}", cluster_queue=cq)
            for job in range(2):
                services.submit_workload(
                    local_queue=lq,
                    name=f"{cq.name}-{job}",
                    pod_sets=[{"count": 1, "requests": {"cpu": "1"}}],
                    queued_at=start,
                )
    for job in range(30):
        services.submit_workload(
            local_queue=cluster.a_train,
            name=f"more-{job}",
            pod_sets=[{"count": 1, "requests": {"nvidia.com/gpu": "1"}}],
            queued_at=start,
        )
    run_all_admission_passes()
    sample_usage()


def test_given_ten_times_more_data_when_pages_load_then_query_counts_do_not_change(cluster, login, client):
    counts = {}
    for user, name, args in PAGES:
        client.logout()
        login(user)
        counts[(user, name)] = count_queries(client, url_of(name, args))

    grow(cluster)

    for user, name, args in PAGES:
        client.logout()
        login(user)
        assert count_queries(client, url_of(name, args)) == counts[(user, name)], (user, name)


@pytest.mark.parametrize(("user", "name", "args"), PAGES)
def test_given_cluster_when_page_loads_then_queries_stay_under_the_ceiling(
    cluster, login, django_assert_max_num_queries, user, name, args
):
    client = login(user)
    with django_assert_max_num_queries(CEILING):
        assert client.get(url_of(name, args)).status_code == 200
