"""A list page costs the same number of queries with 5 rows as with 25 (no N+1).

For each list endpoint: count the queries of a page at the small size, grow the rows (with the
related rows each one shows: quota rows, workloads, budgets on every kind of target), and the
page must stay within that count, for an admin and for a scoped tenant.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from budgets.models import Budget
from core.audit import record_change
from core.models import PolicyChange, TenantMembership
from fairshare.quantities import parse_millis
from queues.models import (
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    LocalQueue,
    Namespace,
    NamespaceQuota,
    ResourceFlavor,
)
from queues.services import submit_workload
from tests.factories import simulation_run
from tests.queues.api.conftest import World, admit, client_for, pod_sets, sample, tiny_scenario

pytestmark = pytest.mark.django_db

SMALL, LARGE = 5, 25
MOST_QUERIES = 8  # authentication, roles, count, page, prefetches


def grow_flavors(world: World, start: int, stop: int) -> None:
    for i in range(start, stop):
        ResourceFlavor.objects.create(name=f"flavor-{i}", node_labels={"pool": f"p{i}"})


def grow_cohorts(world: World, start: int, stop: int) -> None:
    for i in range(start, stop):
        cohort = Cohort.objects.create(name=f"cohort-{i}", parent=world.cohort)
        for resource in ("cpu", "memory"):
            CohortQuota.objects.create(cohort=cohort, flavor=world.flavor, resource=resource, nominal=parse_millis("4"))


def grow_cluster_queues(world: World, start: int, stop: int) -> None:
    for i in range(start, stop):
        cq = ClusterQueue.objects.create(name=f"cq-{i}", cohort=world.cohort)
        for resource in ("cpu", "memory", "nvidia.com/gpu"):
            ClusterQueueQuota.objects.create(cluster_queue=cq, flavor=world.flavor, resource=resource, nominal=1000)
        lq = LocalQueue.objects.create(namespace=world.ns_a, name=f"for-cq-{i}", cluster_queue=cq)
        admit(submit_workload(local_queue=lq, name=f"cq-work-{i}", pod_sets=pod_sets(cpu="1")))


def grow_namespaces(world: World, start: int, stop: int) -> None:
    for i in range(start, stop):
        namespace = Namespace.objects.create(name=f"ns-{i}", weight=Decimal("1.5"))
        NamespaceQuota.objects.create(namespace=namespace, resource="cpu", hard=parse_millis("8"))
        NamespaceQuota.objects.create(namespace=namespace, resource="memory", hard=parse_millis("8Gi"))
        TenantMembership.objects.create(user=world.users["viewer_a"], namespace=namespace)


def grow_local_queues(world: World, start: int, stop: int) -> None:
    for i in range(start, stop):
        lq = LocalQueue.objects.create(namespace=world.ns_a, name=f"lq-{i}", cluster_queue=world.cluster_queue)
        submit_workload(local_queue=lq, name=f"lq-work-{i}", pod_sets=pod_sets(cpu="1"))


def grow_workloads(world: World, start: int, stop: int) -> None:
    for i in range(start, stop):
        workload = submit_workload(local_queue=world.lq_a, name=f"work-{i}", pod_sets=pod_sets(cpu="1", memory="1Gi"))
        if i % 2:
            admit(workload)


def grow_budgets(world: World, start: int, stop: int) -> None:
    targets = [{"local_queue": world.lq_a}, {"namespace": world.ns_a}, {"cluster_queue": world.cluster_queue}]
    for i in range(start, stop):
        Budget.objects.create(
            name=f"budget-{i}",
            allocated_hours=Decimal(10),
            flavor=world.flavor if i % 3 == 2 else None,
            kind=Budget.Kind.RESOURCE_HOURS if i % 3 == 2 else Budget.Kind.WALL_TIME,
            resource="cpu" if i % 3 == 2 else "",
            **targets[i % 3],
        )


def grow_policy_changes(world: World, start: int, stop: int) -> None:
    for i in range(start, stop):
        record_change(
            instance=world.lq_a,
            action=PolicyChange.Action.UPDATE,
            before={"weight": str(i)},
            after={"weight": str(i + 1)},
            actor=world.users["admin"],
        )


def grow_usage_samples(world: World, start: int, stop: int) -> None:
    for _i in range(start, stop):
        sample("localQueue", world.lq_a.pk)
        sample("clusterQueue", world.cluster_queue.pk)


def grow_simulations(world: World, start: int, stop: int) -> None:
    for owner in ("admin", "viewer_a"):
        for i in range(start, stop):
            simulation_run(world.users[owner], name=f"run-{i}", document=tiny_scenario())


GROWERS: dict[str, Callable[[World, int, int], None]] = {
    "resource-flavors": grow_flavors,
    "cohorts": grow_cohorts,
    "cluster-queues": grow_cluster_queues,
    "namespaces": grow_namespaces,
    "local-queues": grow_local_queues,
    "workloads": grow_workloads,
    "budgets": grow_budgets,
    "policy-changes": grow_policy_changes,
    "usage-samples": grow_usage_samples,
    "simulations": grow_simulations,
}


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

    assert large_page.json()["count"] >= small_page.json()["count"] + (LARGE - SMALL)
