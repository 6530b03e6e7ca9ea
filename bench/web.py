"""Web dashboard benchmark: page latency and query counts at 1,000 LocalQueues and 100,000 workloads.

Run as ``python bench/web.py`` from the repository root (``make bench-web``). It creates its own
PostgreSQL database (``fp_bench_web``; ``BENCH_DATABASE_URL`` to change it), migrates it and
fills it with ``bulk_create`` from a fixed seed (kept between runs; ``--refill`` starts over),
then requests each page through Django's test client and prints p50/p95 latency and the
number of queries. Target: every page p95 < 150 ms warm and < 300 ms with a cold cache.

Machines here are noisy, so every figure is also printed as a ratio against a baseline measured
in the same run: the sign-in page, which renders a template and touches no domain table.
Like a server process (``fairportal/wsgi.py``), the benchmark freezes the objects alive once
it is loaded out of the garbage collector's reach before it measures (``fairportal.process``).
Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import sys
import time
from datetime import timedelta
from decimal import Decimal

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import common  # noqa: E402 - bench/common.py, beside this script

DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/fp_bench_web")
os.environ["DATABASE_URL"] = DATABASE_URL
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(64))  # DEBUG=false refuses weak keys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fairportal.settings")

SEED = 20261121
LOCAL_QUEUES = 1_000
NAMESPACES = 250  # four LocalQueues each
CLUSTER_QUEUES = 40
COHORTS = 4  # children of one root cohort, ten ClusterQueues each
WORKLOADS = 100_000
SAMPLE_HOURS = 24
SAMPLE_MINUTES = 5
TENANT_NAMESPACES = 4
GPU = "nvidia.com/gpu"
GIB = 2**30 * 1000
REQUESTS = 30
WARMUP = 3
TARGET_MS = 150  # p95, warm
COLD_TARGET_MS = 300  # p95, every request recomputing the shared aggregates


def fill(rng: random.Random) -> None:
    """Policy, users, workloads, usage series and audit rows, all with bulk_create."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from core.models import PolicyChange, TenantMembership
    from queues.models import (
        AdmissionMode,
        ClusterQueue,
        ClusterQueueQuota,
        Cohort,
        LocalQueue,
        Namespace,
        NamespaceQuota,
        ResourceFlavor,
        UsageSample,
        Workload,
        WorkloadReason,
        WorkloadResource,
        WorkloadState,
    )

    now = timezone.now().replace(microsecond=0)
    a100 = ResourceFlavor.objects.create(name="a100")
    default = ResourceFlavor.objects.create(name="default")
    root = Cohort.objects.create(name="org")
    children = Cohort.objects.bulk_create(
        [
            Cohort(name=f"division-{c}", parent=root, admission_mode=AdmissionMode.USAGE_BASED if c % 2 == 0 else "")
            for c in range(COHORTS)
        ]
    )
    modes = [AdmissionMode.USAGE_BASED, AdmissionMode.DOMINANT_RESOURCE_SHARE, AdmissionMode.TIME_AWARE, ""]
    queues = ClusterQueue.objects.bulk_create(
        [
            ClusterQueue(
                name=f"cq-{q:03d}",
                cohort=children[q % COHORTS],
                admission_mode=modes[q % 4],
                weight=Decimal(1 + q % 3),
                consumed_resources={GPU: 4000.0 * (q % 5), "cpu": 40000.0},
            )
            for q in range(CLUSTER_QUEUES)
        ]
    )
    quotas = []
    for queue in queues:
        quotas += [
            ClusterQueueQuota(
                cluster_queue=queue, flavor=a100, resource=GPU, nominal=16_000, borrowing_limit=8_000, flavor_order=0
            ),
            ClusterQueueQuota(cluster_queue=queue, flavor=a100, resource="cpu", nominal=128_000, flavor_order=0),
            ClusterQueueQuota(cluster_queue=queue, flavor=default, resource="cpu", nominal=64_000, flavor_order=1),
            ClusterQueueQuota(cluster_queue=queue, flavor=a100, resource="memory", nominal=1024 * GIB, flavor_order=0),
        ]
    ClusterQueueQuota.objects.bulk_create(quotas)
    namespaces = Namespace.objects.bulk_create(
        [Namespace(name=f"team-{n:03d}", weight=Decimal(rng.choice(["0.5", "1", "1", "2"]))) for n in range(NAMESPACES)]
    )
    NamespaceQuota.objects.bulk_create([NamespaceQuota(namespace=ns, resource=GPU, hard=64_000) for ns in namespaces])
    per_namespace = LOCAL_QUEUES // NAMESPACES
    lqs = LocalQueue.objects.bulk_create(
        [
            LocalQueue(
                namespace=ns,
                name=f"q{i}",
                cluster_queue=queues[(n * per_namespace + i) % CLUSTER_QUEUES],
                weight=Decimal(rng.choice(["1", "1", "2"])),
                weighted_share=rng.random() * 1000,
                consumed_resources={GPU: rng.random() * 8000, "cpu": rng.random() * 64000},
            )
            for n, ns in enumerate(namespaces)
            for i in range(per_namespace)
        ]
    )

    users = get_user_model().objects
    users.create_user("admin", password="admin", is_staff=True, is_superuser=True)
    tenant = users.create_user("tenant", password="tenant")
    TenantMembership.objects.bulk_create(
        [TenantMembership(user=tenant, namespace=ns, role="editor") for ns in namespaces[:TENANT_NAMESPACES]]
    )

    states = [WorkloadState.FINISHED] * 7 + [WorkloadState.PENDING] * 2 + [WorkloadState.ADMITTED]
    workloads = []
    reasons: dict[int, tuple[str, str]] = {}
    for index in range(WORKLOADS):
        lq = lqs[rng.randrange(len(lqs))]
        state = states[rng.randrange(len(states))]
        gpus = rng.choice([0, 1, 2, 4])
        requests = {"cpu": rng.choice([1, 2, 4, 8]) * 1000, "memory": rng.choice([4, 16, 64]) * GIB}
        if gpus:
            requests[GPU] = gpus * 1000
        queued = now - timedelta(seconds=rng.randrange(7 * 86400))
        workload = Workload(
            namespace_id=lq.namespace_id,
            local_queue=lq,
            name=f"job-{index:06d}",
            priority=rng.choice([0, 0, 10, 100]),
            pod_sets=[{"name": "main", "count": 1, "requests": requests}],
            state=state,
            created_at=queued,
            queued_at=queued,
            duration_seconds=3600,
        )
        if state in (WorkloadState.ADMITTED, WorkloadState.FINISHED):
            workload.cluster_queue_id = lq.cluster_queue_id
            workload.admitted_at = queued + timedelta(minutes=5)
            workload.flavor_assignment = dict.fromkeys(requests, "a100")
            if state == WorkloadState.FINISHED:
                workload.finished_at = workload.admitted_at + timedelta(hours=1)
        else:
            reasons[index] = (
                rng.choice(["InsufficientQuota", "WaitingForFairShare", "NamespaceQuotaExceeded"]),
                f"insufficient quota for {GPU} in flavor a100 of ClusterQueue cq-{lq.cluster_queue_id:03d}",
            )
        workloads.append(workload)
    created = Workload.objects.bulk_create(workloads, batch_size=5000)
    WorkloadReason.objects.bulk_create(  # stored apart from the workload rows, as the pass stores them
        [
            WorkloadReason(workload=created[index], code=code, message=message)
            for index, (code, message) in reasons.items()
        ],
        batch_size=10000,
    )
    store_queue_order()
    WorkloadResource.objects.bulk_create(
        [
            WorkloadResource(
                workload=w, resource=resource, amount=amount, flavor=a100 if w.state != WorkloadState.PENDING else None
            )
            for w in created
            for resource, amount in w.pod_sets[0]["requests"].items()
        ],
        batch_size=10000,
    )

    samples = []
    steps = SAMPLE_HOURS * 60 // SAMPLE_MINUTES
    targets = (
        [("cohort", c.id, {GPU: 160_000, "cpu": 1_920_000}) for c in [root, *children]]
        + [("clusterQueue", q.id, {GPU: 16_000, "cpu": 192_000}) for q in queues]
        + [("namespace", ns.id, {}) for ns in namespaces]
        + [("localQueue", lq.id, {}) for lq in lqs]
    )
    for step in range(steps):
        at = now - timedelta(minutes=SAMPLE_MINUTES * (steps - step))
        for kind, object_id, capacity in targets:
            load = 0.5 + 0.4 * rng.random()
            scale = 10.0 if kind == "cohort" else 1.0
            allocated = {GPU: int(8000 * load * scale), "cpu": int(64000 * load * scale)}
            samples.append(
                UsageSample(
                    sampled_at=at,
                    kind=kind,
                    object_id=object_id,
                    allocated=allocated,
                    consumed={r: v * 0.9 for r, v in allocated.items()},
                    capacity=capacity,
                    weighted_share=load * 100,
                    admitted_count=rng.randrange(5),
                    pending_count=rng.randrange(10),
                )
            )
        if len(samples) >= 50_000:
            UsageSample.objects.bulk_create(samples, batch_size=10000)
            samples = []
    UsageSample.objects.bulk_create(samples, batch_size=10000)
    PolicyChange.objects.bulk_create(
        [
            PolicyChange(
                surface="ui",
                action="update",
                object_type="localqueue",
                object_id=str(lq.id),
                object_repr=str(lq.id),
                actor_name="admin",
                before={"weight": "1"},
                after={"weight": "2"},
            )
            for lq in lqs[:2000]
        ]
    )


def store_queue_order() -> None:
    """Each ClusterQueue's pending workloads in submission order, as a pass would store them."""
    from django.utils import timezone

    from queues.models import ClusterQueue, PendingOrder, Workload, WorkloadState

    order: dict[int, list[int]] = {pk: [] for pk in ClusterQueue.objects.values_list("id", flat=True)}
    for pk, cq_id in (
        Workload.objects.filter(state=WorkloadState.PENDING)
        .order_by("id")
        .values_list("id", "local_queue__cluster_queue_id")
    ):
        order[cq_id].append(pk)
    PendingOrder.objects.all().delete()
    PendingOrder.objects.bulk_create(
        [
            PendingOrder(cluster_queue_id=cq_id, workload_ids=ids, planned_at=timezone.now())
            for cq_id, ids in order.items()
        ]
    )


def prepare(refill: bool) -> None:
    common.ensure_database(DATABASE_URL)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from queues.models import Workload

    if refill:
        with connection.cursor() as cursor:
            cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public;")
    call_command("migrate", verbosity=0, interactive=False)
    if Workload.objects.count() < WORKLOADS:
        if Workload.objects.exists():
            sys.exit("the benchmark database holds other data: run with --refill")
        started = time.perf_counter()
        print(f"filling {DATABASE_URL} (once; --refill to start over) ...", flush=True)
        fill(random.Random(SEED))
        print(f"filled in {time.perf_counter() - started:.0f} s", flush=True)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    from queues.models import PendingOrder

    if not PendingOrder.objects.exists():  # a database filled before queue orders were stored
        store_queue_order()


def measure(client, path: str, *, cold: bool = False) -> tuple[float, float, float, int]:
    """p50 and p95 in ms over ``REQUESTS`` requests after ``WARMUP``, the median CPU time of this
    process per request (the web side: template, Python, driver; not PostgreSQL's), and the
    query count."""
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for _ in range(WARMUP):
        assert client.get(path).status_code == 200, path
    timings, cpu = [], []
    for _ in range(REQUESTS):
        if cold:
            cache.clear()
        started, cpu_started = time.perf_counter(), time.process_time()
        response = client.get(path)
        timings.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
        assert response.status_code == 200, path
    with CaptureQueriesContext(connection) as captured:
        client.get(path)
    timings.sort()
    p95 = timings[min(len(timings) - 1, round(0.95 * len(timings)) - 1)]
    return statistics.median(timings), p95, statistics.median(cpu), len(captured.captured_queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refill", action="store_true", help="drop and refill the benchmark database")
    args = parser.parse_args()
    prepare(args.refill)
    from fairportal.process import freeze_loaded_objects

    freeze_loaded_objects()  # as the server's processes do once loaded (fairportal/wsgi.py)

    from django.contrib.auth import get_user_model
    from django.test import Client

    from queues.models import LocalQueue, PendingOrder, UsageSample, Workload

    # force_login: the sign-in backends (django-axes first) want the request a real sign-in has
    admin, tenant = Client(), Client()
    users = get_user_model().objects
    admin.force_login(users.get(username="admin"))
    tenant.force_login(users.get(username="tenant"))
    print(
        f"{LocalQueue.objects.count():,} LocalQueues, {Workload.objects.count():,} workloads "
        f"({Workload.objects.filter(state='Pending').count():,} pending), "
        f"{UsageSample.objects.count():,} usage samples; "
        f"{REQUESTS} requests per page after {WARMUP} warm-up\n"
    )
    # Why-pending pages of workloads far back in line: everything ahead is grouped by queue.
    last = PendingOrder.objects.order_by("cluster_queue_id").first()
    deep = Workload.objects.select_related("namespace").get(pk=last.workload_ids[-1])
    own = (
        Workload.objects.filter(state="Pending", namespace__name="team-000")
        .select_related("namespace")
        .order_by("-id")
        .first()
    )
    anonymous = Client()
    base50, base95, base_cpu, _ = measure(anonymous, "/accounts/login/")
    pages = [
        ("baseline: sign-in page", anonymous, "/accounts/login/", False),
        ("overview (admin)", admin, "/", False),
        ("overview (admin, cold cache)", admin, "/", True),
        ("overview (tenant)", tenant, "/", False),
        ("queue tree (admin, page 1)", admin, "/queues/", False),
        ("queue tree (admin, cold cache)", admin, "/queues/", True),
        ("queue tree (admin, page 10)", admin, "/queues/?page=10", False),
        ("queue tree (tenant)", tenant, "/queues/", False),
        ("workload list (admin)", admin, "/workloads/", False),
        ("workload list (admin, pending)", admin, "/workloads/?state=Pending", False),
        ("workload list (admin, page 1000)", admin, "/workloads/?page=1000", False),
        ("workload list (tenant, pending)", tenant, "/workloads/?state=Pending", False),
        ("LocalQueue detail (admin)", admin, "/namespaces/team-000/queues/q0/", False),
        ("ClusterQueue detail (admin)", admin, "/queues/cluster-queues/cq-000/", False),
        ("cohort detail (admin)", admin, "/queues/cohorts/division-0/", False),
        ("namespace detail (tenant)", tenant, "/namespaces/team-000/", False),
        (
            f"why pending (admin, position {len(last.workload_ids):,})",
            admin,
            f"/namespaces/{deep.namespace.name}/workloads/{deep.name}/",
            False,
        ),
        ("why pending (tenant)", tenant, f"/namespaces/{own.namespace.name}/workloads/{own.name}/", False),
        ("audit log (admin)", admin, "/audit/", False),
        ("overview live poll (admin)", admin, "/?live=1", False),
    ]
    print(f"uptime: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (load average)")
    print(f"{'page':36} {'p50 ms':>8} {'p95 ms':>8} {'p95/base':>9} {'cpu ms':>7} {'queries':>8}  target")
    failed = False
    for label, client, path, cold in pages:
        p50, p95, cpu, queries = (
            (base50, base95, base_cpu, 0) if label.startswith("baseline") else measure(client, path, cold=cold)
        )
        gated = not label.startswith("baseline")
        verdict = ("ok" if p95 < (COLD_TARGET_MS if cold else TARGET_MS) else "SLOW") if gated else ""
        failed |= verdict == "SLOW"
        print(f"{label:36} {p50:8.1f} {p95:8.1f} {p95 / base95:8.1f}x {cpu:7.1f} {queries:8d}  {verdict}")
    print(f"\np95 target for every page: < {TARGET_MS} ms warm, < {COLD_TARGET_MS} ms with a cold cache")
    print("cold cache: every request recomputes the shared cluster-wide aggregates (kept 5 s) and the")
    print("fairness history (kept until the next usage sample); cpu ms: median CPU time of this process")
    print(f"per request (the web side, without PostgreSQL's); load average now {os.getloadavg()[0]:.2f}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
