"""A small two-tenant cluster with a few hours of real control-loop history, for the view tests.

    cohort org
      cq-gpu  (UsageBasedAdmissionFairSharing, 8 GPU + 64 CPU nominal, may borrow 4 GPU)
        team-a/train (weight 2), team-b/train
      cq-cpu  (StrictFIFO, no fair sharing, 32 CPU)
        team-a/batch, team-c/etl

Budgets: ``a-gpu-hours`` on team-a/train (100 GPU-hours), ``b-wall-time`` on team-b/train (10 h).
Users: ``admin`` (staff), ``alice`` editor of team-a, ``victor`` viewer of team-a, ``bob``
editor of team-b (the "other tenant"), ``nobody`` signed in without any namespace.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.utils import timezone

from budgets.models import Budget
from budgets.services import reconcile_all_budgets
from core.models import TenantMembership
from fairshare.quantities import parse_millis
from queues import services
from queues.admission.passes import run_all_admission_passes
from queues.models import (
    AdmissionMode,
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    LocalQueue,
    Namespace,
    NamespaceQuota,
    QueueHold,
    QueueingStrategy,
    ResourceFlavor,
)
from queues.services.usage import sample_usage

GPU = "nvidia.com/gpu"
PASSWORD = "pw-for-tests"


@dataclass
class Cluster:
    cohort: Cohort
    cq_gpu: ClusterQueue
    cq_cpu: ClusterQueue
    team_a: Namespace
    team_b: Namespace
    team_c: Namespace
    a_train: LocalQueue
    b_train: LocalQueue
    a_batch: LocalQueue
    c_etl: LocalQueue


def _quota(cq: ClusterQueue, flavor: ResourceFlavor, resource: str, nominal: str, borrowing: str | None = None) -> None:
    ClusterQueueQuota.objects.create(
        cluster_queue=cq,
        flavor=flavor,
        resource=resource,
        nominal=parse_millis(nominal),
        borrowing_limit=None if borrowing is None else parse_millis(borrowing),
    )


def make_users(cluster: Cluster) -> None:
    users = get_user_model().objects
    users.create_user("admin", password=PASSWORD, is_staff=True, is_superuser=True)
    alice = users.create_user("alice", password=PASSWORD)
    victor = users.create_user("victor", password=PASSWORD)
    bob = users.create_user("bob", password=PASSWORD)
    users.create_user("nobody", password=PASSWORD)
    TenantMembership.objects.create(user=alice, namespace=cluster.team_a, role=TenantMembership.Role.EDITOR)
    TenantMembership.objects.create(user=victor, namespace=cluster.team_a, role=TenantMembership.Role.VIEWER)
    TenantMembership.objects.create(user=bob, namespace=cluster.team_b, role=TenantMembership.Role.EDITOR)


def build_cluster(*, history_hours: int = 2, extra_local_queues: int = 0, extra_workloads: int = 0) -> Cluster:
    """Policy, users, workloads and ``history_hours`` of samples (passes and samples every 30 min).

    ``extra_local_queues`` / ``extra_workloads`` grow the cluster without changing its shape,
    for tests that check a page's query count does not depend on the amount of data.
    """
    a100 = ResourceFlavor.objects.create(name="a100")
    cpu_flavor = ResourceFlavor.objects.create(name="default")
    org = Cohort.objects.create(name="org")
    cq_gpu = ClusterQueue.objects.create(name="cq-gpu", cohort=org, admission_mode=AdmissionMode.USAGE_BASED)
    _quota(cq_gpu, a100, GPU, "8", borrowing="4")
    _quota(cq_gpu, a100, "cpu", "64")
    cq_cpu = ClusterQueue.objects.create(name="cq-cpu", cohort=org, queueing_strategy=QueueingStrategy.STRICT_FIFO)
    _quota(cq_cpu, cpu_flavor, "cpu", "32")
    team_a = Namespace.objects.create(name="team-a", weight=Decimal(2))
    team_b = Namespace.objects.create(name="team-b")
    team_c = Namespace.objects.create(name="team-c")
    NamespaceQuota.objects.create(namespace=team_a, resource=GPU, hard=parse_millis("8"))
    cluster = Cluster(
        cohort=org,
        cq_gpu=cq_gpu,
        cq_cpu=cq_cpu,
        team_a=team_a,
        team_b=team_b,
        team_c=team_c,
        a_train=LocalQueue.objects.create(namespace=team_a, name="train", cluster_queue=cq_gpu, weight=Decimal(2)),
        b_train=LocalQueue.objects.create(namespace=team_b, name="train", cluster_queue=cq_gpu),
        a_batch=LocalQueue.objects.create(namespace=team_a, name="batch", cluster_queue=cq_cpu),
        c_etl=LocalQueue.objects.create(namespace=team_c, name="etl", cluster_queue=cq_cpu),
    )
    make_users(cluster)

    start = timezone.now() - timedelta(hours=history_hours)

    def submit(lq: LocalQueue, name: str, gpu: str = "0", cpu: str = "4", priority: int = 0, at: object = None) -> None:
        requests = {"cpu": cpu} if gpu == "0" else {GPU: gpu, "cpu": cpu}
        services.submit_workload(
            local_queue=lq,
            name=name,
            pod_sets=[{"count": 1, "requests": requests}],
            priority=priority,
            duration_seconds=None,
            queued_at=at or start,
        )

    # team-b fills the GPU queue first; team-a's bigger jobs must then wait for fair share.
    for index in range(3):
        submit(cluster.b_train, f"b-job-{index}", gpu="4", cpu="8")
    for index in range(3):
        submit(cluster.a_train, f"a-job-{index}", gpu="4", cpu="8", at=start + timedelta(minutes=1))
    # StrictFIFO: team-c's head needs more than the queue holds, so team-a's batch job waits behind it.
    submit(cluster.c_etl, "c-huge", cpu="40")
    submit(cluster.a_batch, "a-batch-0", cpu="2", at=start + timedelta(minutes=2))
    for index in range(extra_workloads):
        submit(cluster.b_train, f"b-extra-{index}", gpu="1", cpu="1", at=start + timedelta(minutes=3))
    for index in range(extra_local_queues):
        ns = Namespace.objects.create(name=f"team-x{index}")
        LocalQueue.objects.create(namespace=ns, name="q", cluster_queue=cq_cpu)

    moment = start
    while moment <= timezone.now():
        run_all_admission_passes(now=moment)
        sample_usage(now=moment)
        moment += timedelta(minutes=30)
    # Budgets on each tenant's GPU queue, measured by the budgets app's own cycle.
    Budget.objects.create(
        name="a-gpu-hours",
        local_queue=cluster.a_train,
        kind=Budget.Kind.RESOURCE_HOURS,
        resource=GPU,
        allocated_hours=Decimal(100),
        renewal=Budget.Renewal.MONTHLY,
        anchor=start,
    )
    Budget.objects.create(name="b-wall-time", local_queue=cluster.b_train, allocated_hours=Decimal(10), anchor=start)
    reconcile_all_budgets()
    # A budget hold put on after the last pass: the tree shows it, the reasons are the last pass's.
    QueueHold.objects.create(local_queue=cluster.c_etl, message="budget etl-hours is exhausted", source="budget:test")
    return cluster


def page_text(html: str) -> str:
    """What a reader sees of ``html``: tags and the glossary's hidden definitions (``{% term %}``'s
    tooltips, shown only on hover or focus) removed, entities decoded, spaces collapsed."""
    import re
    from html import unescape

    html = re.sub(r'<span class="term-tip"[^>]*>.*?</span>', "", html, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", html)))
