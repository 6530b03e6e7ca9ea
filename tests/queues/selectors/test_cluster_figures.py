"""Per-cluster figures (``queues.selectors.clusters``): capacity, admitted, pending, health, for
an admin and a tenant, in a fixed number of queries. The data: ``tests.queues.two_clusters``."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.access import ADMIN, access_for
from fairshare.quantities import parse_millis
from queues.models import Workload, WorkloadState
from queues.selectors.clusters import cluster_figures
from tests.queues.loop_fixtures import make_local_queue, submit
from tests.queues.two_clusters import build_two_clusters

pytestmark = pytest.mark.django_db

CPU = parse_millis


@pytest.fixture
def two(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    return build_two_clusters()


def by_name(viewer):
    return {figures.name: figures for figures in cluster_figures(viewer)}


def test_given_two_clusters_when_an_admin_reads_then_each_has_its_capacity_admitted_pending_and_health(two):
    seen = by_name(ADMIN)

    assert list(seen) == ["default", "east", "west"]
    east, west, default = seen["east"], seen["west"], seen["default"]
    # capacity: spread's east-cpu 4 + east-only's east-big 8 + cohort org's own 2 on east-big
    assert east.capacity == {"cpu": CPU("14")}
    assert west.capacity == {"cpu": CPU("4")}
    assert default.capacity == {} and default.admitted_workloads == 0
    # admitted: team-a 2 x 2 CPU (east-cpu; west is held), team-b 2 x 4 CPU
    assert east.admitted == {"cpu": CPU("12")} and east.admitted_workloads == 4
    assert west.admitted == {"cpu": 0} and west.admitted_workloads == 0
    assert east.utilisation.ratio == pytest.approx(12 / 14)
    # pending: team-b's third only fits east-only (east); team-a's third could go to either;
    # the imported job is bound to west
    assert (east.pending_only_here, east.pending_could_run) == (1, 2)
    assert (west.pending_only_here, west.pending_could_run) == (1, 2)
    assert east.flavors == ["east-big", "east-cpu"] and west.flavors == ["west-cpu"]
    assert east.health.state == "reachable" and east.health.last_error == ""
    assert west.health.state == "unreachable" and west.health.backing_off and west.health.failures == 1
    assert "squeue not found" in west.health.last_error


def test_given_admitted_counts_then_they_match_the_workloads_recorded_on_each_cluster(two):
    seen = by_name(ADMIN)

    for name in ("east", "west"):
        recorded = Workload.objects.filter(state=WorkloadState.ADMITTED, cluster__name=name).count()
        assert seen[name].admitted_workloads == recorded
    assert sum(f.admitted_workloads for f in seen.values()) == Workload.objects.filter(state="Admitted").count()


def test_given_a_tenant_then_figures_cover_only_its_namespaces_and_queues_and_never_the_last_error(two):
    from django.contrib.auth import get_user_model

    alice = access_for(get_user_model().objects.get(username="alice"))
    bob = access_for(get_user_model().objects.get(username="bob"))

    mine = by_name(alice)
    assert list(mine) == ["default", "east", "west"]  # names and health: every user
    assert mine["east"].capacity == {"cpu": CPU("4")}  # spread's east-cpu only, not east-only's nor the cohort's
    assert mine["east"].admitted == {"cpu": CPU("4")} and mine["east"].admitted_workloads == 2
    assert (mine["east"].pending_only_here, mine["east"].pending_could_run) == (0, 1)
    assert (mine["west"].pending_only_here, mine["west"].pending_could_run) == (1, 2)
    assert mine["west"].health.state == "unreachable" and mine["west"].health.last_error == ""

    theirs = by_name(bob)
    assert theirs["east"].capacity == {"cpu": CPU("8")}  # east-only's quota: the cohort's own is not bob's
    assert theirs["east"].admitted == {"cpu": CPU("8")} and theirs["east"].admitted_workloads == 2
    assert (theirs["east"].pending_only_here, theirs["east"].pending_could_run) == (1, 1)
    assert theirs["west"].cells == [] and theirs["west"].pending_could_run == 0  # nothing of team-a


def test_given_a_name_then_only_that_cluster_is_read(two):
    found = cluster_figures(ADMIN, name="west")

    assert [f.name for f in found] == ["west"] and found[0].pending_only_here == 1
    assert cluster_figures(ADMIN, name="nowhere") == []


def count(viewer) -> int:
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        cluster_figures(viewer)
    return len(captured.captured_queries)


def test_given_ten_times_more_work_then_the_figures_cost_the_same_fixed_queries(two):
    from django.contrib.auth import get_user_model

    alice = access_for(get_user_model().objects.get(username="alice"))
    before = (count(ADMIN), count(alice))
    for index in range(10):
        lq = make_local_queue(f"grown-{index}", "main", two.spread if index % 2 else two.east_only)
        for job in range(3):
            submit(lq, f"g-{job}", cpu="1")

    assert (count(ADMIN), count(alice)) == before
    assert before[0] == 11  # clusters 1, flavors 1, structure 5, admitted 2, pending 1, bound 1
