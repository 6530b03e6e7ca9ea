"""Two clusters besides the default one, with admitted, pending and bound work, for the
per-cluster figures' tests (selector, pages, API, browser).

- ``east``: the built-in simulated backend, reachable. Flavors ``east-cpu`` (ClusterQueue
  ``spread``, 4 CPU) and ``east-big`` (ClusterQueue ``east-only``, 8 CPU, plus 2 CPU of cohort
  ``org``'s own quota).
- ``west``: a real Slurm backend pointed at client tools that do not exist, so its sync fails
  as a stopped slurmctld's does and it is marked unreachable (``BackendUnavailable``, the real
  path). Flavor ``west-cpu`` (ClusterQueue ``spread``, 4 CPU).
- ``spread`` (east-cpu first, then west-cpu) is fed by ``team-a/main``; ``east-only`` by
  ``team-b/main``. alice edits team-a, bob team-b, admin is a platform admin.

After one admission pass (west held: unreachable): team-a has 2 workloads of 2 CPU admitted on
east and 1 pending that could run on either; ``team-a/imported`` is pending and bound to west
(a job of west's scheduler: a ``ClusterJob`` link); team-b has 2 workloads of 4 CPU admitted
on east and 1 pending that only east can run.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model

from core.models import TenantMembership
from fairshare.quantities import parse_millis
from queues.admission.passes import run_all_admission_passes
from queues.models import (
    Cluster,
    ClusterJob,
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    ResourceFlavor,
    Workload,
    default_cluster,
)
from queues.services import cluster as cluster_service
from tests.queues.loop_fixtures import make_local_queue, submit
from tests.queues.views.cluster import PASSWORD

BROKEN_SLURM = {"backend": "slurm", "slurm_bin_dir": "/nonexistent/slurm/bin", "slurm_conf": "/nonexistent/slurm.conf"}


@dataclass
class TwoClusters:
    east: Cluster
    west: Cluster
    spread: ClusterQueue
    east_only: ClusterQueue
    bound: Workload


def _quota(cq: ClusterQueue, flavor: ResourceFlavor, cpu: str, order: int = 0) -> None:
    ClusterQueueQuota.objects.create(
        cluster_queue=cq, flavor=flavor, resource="cpu", nominal=parse_millis(cpu), flavor_order=order
    )


def build_two_clusters(*, users: bool = True) -> TwoClusters:
    default_cluster()
    east = Cluster.objects.create(name="east", backend="simulated", description="the simulated one")
    west = Cluster.objects.create(name="west", description="a Slurm that does not answer", **BROKEN_SLURM)
    east_cpu = ResourceFlavor.objects.create(name="east-cpu", cluster=east)
    east_big = ResourceFlavor.objects.create(name="east-big", cluster=east)
    west_cpu = ResourceFlavor.objects.create(name="west-cpu", cluster=west)
    org = Cohort.objects.create(name="org")
    CohortQuota.objects.create(cohort=org, flavor=east_big, resource="cpu", nominal=parse_millis("2"))
    spread = ClusterQueue.objects.create(name="spread")
    _quota(spread, east_cpu, "4", 0)
    _quota(spread, west_cpu, "4", 1)
    east_only = ClusterQueue.objects.create(name="east-only", cohort=org)
    _quota(east_only, east_big, "8")
    a_main = make_local_queue("team-a", "main", spread)
    b_main = make_local_queue("team-b", "main", east_only)
    if users:
        people = get_user_model().objects
        people.create_user("admin", password=PASSWORD, is_staff=True, is_superuser=True)
        alice = people.create_user("alice", password=PASSWORD)
        bob = people.create_user("bob", password=PASSWORD)
        TenantMembership.objects.create(user=alice, namespace=a_main.namespace, role=TenantMembership.Role.EDITOR)
        TenantMembership.objects.create(user=bob, namespace=b_main.namespace, role=TenantMembership.Role.EDITOR)

    assert cluster_service.sync_cluster(cluster=west).backed_off  # the real failure: west is unreachable now
    for index in range(3):
        submit(a_main, f"a-{index}", cpu="2")
        submit(b_main, f"b-{index}", cpu="4")
    run_all_admission_passes()
    bound = submit(a_main, "imported", cpu="1")
    ClusterJob.objects.create(backend="slurm", cluster=west, external_id="4242", workload=bound)
    return TwoClusters(east=east, west=west, spread=spread, east_only=east_only, bound=bound)
