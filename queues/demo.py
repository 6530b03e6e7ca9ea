"""The demo cluster loaded by ``manage.py seed_demo``: GPU and CPU flavors, a cohort tree,
ClusterQueues in each admission mode, seven team namespaces, budgets, users and a few hundred
workloads of mixed sizes (finished history plus pending work for the control loop to admit).

Idempotent: policy objects are created or updated by name, workloads are created only when
missing (deterministic names and a fixed seed), users keep a password once set.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, overload

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from core import extensions
from core.extensions import ExtensionPoint
from core.models import TenantMembership
from fairshare.quantities import parse_millis
from queues.models import (
    AdmissionMode,
    AdmissionRecord,
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    LocalQueue,
    Namespace,
    NamespaceQuota,
    QueueingStrategy,
    ReclaimWithinCohort,
    ResourceFlavor,
    WithinClusterQueuePreemption,
    Workload,
    WorkloadPriorityClass,
    WorkloadResource,
    WorkloadState,
)
from queues.models.workload import normalise_pod_sets, total_requests
from queues.services import usage_counters
from queues.services.workloads import new_workload

GPU = "nvidia.com/gpu"
SEED = 20261121

FLAVORS = {
    "default": "General-purpose CPU nodes",
    "a100": "NVIDIA A100 80GB nodes (8 GPUs each)",
    "h100": "NVIDIA H100 80GB nodes (8 GPUs each)",
}

# Kueue WorkloadPriorityClasses for the priorities the demo workloads use.
PRIORITY_CLASSES = {
    "urgent": (100, "Deadline today"),
    "high": (10, "Ahead of routine work"),
    "normal": (0, "Routine work"),
}
# What the teams may submit with (the interns: routine work only), and the class of a submission naming none.
ALLOWED_PRIORITY_CLASSES = {"team-interns": ["normal"]}
DEFAULT_ALLOWED_CLASSES = ["high", "normal", "urgent"]
DEFAULT_PRIORITY_CLASS = "normal"
CLASS_OF_PRIORITY = {value: name for name, (value, _) in PRIORITY_CLASSES.items()}

# name -> (parent, weight, admission mode, own quotas [(flavor, resource, nominal)])
COHORTS: dict[str, tuple[str | None, str, str, list[tuple[str, str, str]]]] = {
    "org": (None, "1", "", []),
    "research": ("org", "2", "", [("a100", GPU, "8"), ("a100", "cpu", "64"), ("a100", "memory", "512Gi")]),
}

# name -> cohort, weight, strategy, mode, preemption within, reclaim, quotas [(flavor, res, nominal, borrow, lend)]
CLUSTER_QUEUES: dict[str, dict[str, Any]] = {
    "gpu-training": {
        "cohort": "research",
        "weight": "2",
        "strategy": QueueingStrategy.BEST_EFFORT_FIFO,
        "mode": AdmissionMode.USAGE_BASED,
        "within": WithinClusterQueuePreemption.LOWER_PRIORITY,
        "reclaim": ReclaimWithinCohort.ANY,
        "quotas": [
            ("a100", GPU, "16", "8", None),
            ("a100", "cpu", "128", "64", None),
            ("a100", "memory", "1Ti", "512Gi", None),
            ("h100", GPU, "8", "0", None),
            ("h100", "cpu", "96", "0", None),
            ("h100", "memory", "768Gi", "0", None),
        ],
    },
    "gpu-inference": {
        "cohort": "research",
        "weight": "1",
        "strategy": QueueingStrategy.BEST_EFFORT_FIFO,
        "mode": AdmissionMode.DOMINANT_RESOURCE_SHARE,
        "within": WithinClusterQueuePreemption.NEVER,
        "reclaim": ReclaimWithinCohort.LOWER_PRIORITY,
        "quotas": [
            ("a100", GPU, "8", "8", "4"),
            ("a100", "cpu", "64", "32", "32"),
            ("a100", "memory", "512Gi", "256Gi", "256Gi"),
        ],
    },
    "cpu-batch": {
        "cohort": "org",
        "weight": "1",
        "strategy": QueueingStrategy.BEST_EFFORT_FIFO,
        "mode": AdmissionMode.TIME_AWARE,
        "within": WithinClusterQueuePreemption.NEVER,
        "reclaim": ReclaimWithinCohort.NEVER,
        "quotas": [("default", "cpu", "256", "64", None), ("default", "memory", "1Ti", "256Gi", None)],
    },
    "cpu-interactive": {
        "cohort": "org",
        "weight": "1",
        "strategy": QueueingStrategy.STRICT_FIFO,
        "mode": "",
        "within": WithinClusterQueuePreemption.NEVER,
        "reclaim": ReclaimWithinCohort.NEVER,
        "quotas": [("default", "cpu", "64", "0", "32"), ("default", "memory", "256Gi", "0", "128Gi")],
    },
}

# namespace -> weight, hard quota, local queues [(name, cluster queue, weight)]
NAMESPACES: dict[str, tuple[str, dict[str, str], list[tuple[str, str, str]]]] = {
    "team-vision": ("2", {GPU: "24", "cpu": "192"}, [("training", "gpu-training", "2"), ("batch", "cpu-batch", "1")]),
    "team-nlp": (
        "2",
        {GPU: "24", "cpu": "192"},
        [("training", "gpu-training", "1"), ("serving", "gpu-inference", "1")],
    ),
    "team-speech": ("1", {GPU: "12"}, [("training", "gpu-training", "1"), ("batch", "cpu-batch", "1")]),
    "team-robotics": ("1", {GPU: "8", "cpu": "96"}, [("sim", "cpu-batch", "1"), ("training", "gpu-training", "1")]),
    "team-recsys": ("1.5", {GPU: "8"}, [("serving", "gpu-inference", "1"), ("etl", "cpu-batch", "1")]),
    "team-platform": ("1", {"cpu": "64"}, [("ci", "cpu-interactive", "1"), ("nightly", "cpu-batch", "0.5")]),
    "team-interns": (
        "0.5",
        {GPU: "4", "cpu": "32"},
        [("sandbox", "cpu-interactive", "1"), ("gpu", "gpu-inference", "1")],
    ),
}

# Policy changes the demo makes while its history is replayed, through the audited service
# (queues.services.policy) as the admin, so the audit log and the charts' policy markers have
# something to show: (share of the replayed span, kind, name, field, value at the start, value
# set then, surface, note). Each ends at the value the tables above give, so the demo's final
# policy is the same with or without a history.
POLICY_STORY: list[tuple[float, str, str, str, str, str, str, str]] = [
    (0.3, "localqueue", "team-vision/training", "weight", "1", "2", "ui", "demo: the vision paper deadline"),
    (0.55, "namespace", "team-recsys", "weight", "1", "1.5", "api", "demo: recsys joins the GPU serving rota"),
    (0.8, "namespace", "team-speech", "weight", "2", "1", "cli", "demo: speech's quarter of extra share ends"),
]


def _story_object(kind: str, name: str) -> Any:
    if kind == "localqueue":
        namespace, lq_name = name.split("/")
        return LocalQueue.objects.get(namespace__name=namespace, name=lq_name)
    return Namespace.objects.get(name=name)


def _start_policy_story() -> bool:
    """Set the story's starting values (part of the seed, not audited) unless a history was
    seeded before (a second seed tells no story twice). True when the story is to be told."""
    from core.models import PolicyChange

    if PolicyChange.objects.filter(note__startswith="demo: ").exists():
        return False
    for _, kind, name, field_name, start, _, _, _ in POLICY_STORY:
        type(_story_object(kind, name))._default_manager.filter(pk=_story_object(kind, name).pk).update(
            **{field_name: Decimal(start)}
        )
    return True


def _policy_story_events(start: datetime, seconds: int) -> list[tuple[datetime, Callable[[datetime], None]]]:
    """The story's changes at their moments of the replay, each one audited write."""
    from core.models import PolicyChange
    from queues.services.policy import save_policy_object

    admin = get_user_model().objects.filter(username="admin").first()

    def change(
        kind: str, name: str, field_name: str, value: str, surface: str, note: str
    ) -> Callable[[datetime], None]:
        def apply(moment: datetime) -> None:
            instance = _story_object(kind, name)
            setattr(instance, field_name, Decimal(value))
            save_policy_object(instance, actor=admin, surface=surface)
            # The replay runs the past now: the audit row gets the replayed moment, as the
            # usage samples and admissions of the same step do.
            latest = PolicyChange.objects.filter(object_type=kind, object_id=str(instance.pk)).latest("id")
            PolicyChange.objects.filter(pk=latest.pk).update(at=moment, note=note)

        return apply

    return [
        (start + timedelta(seconds=seconds * share), change(kind, name, field_name, value, surface, note))
        for share, kind, name, field_name, _, value, surface, note in POLICY_STORY
    ]


# Demo logins. The password is the username only with DEBUG=true (a development machine);
# otherwise each user gets a random one, printed once when it is created.
USERS: list[dict[str, Any]] = [
    {"username": "admin", "staff": True, "memberships": []},
    {
        "username": "alice",
        "staff": False,
        "memberships": [("team-vision", TenantMembership.Role.EDITOR), ("team-nlp", TenantMembership.Role.VIEWER)],
    },
    {"username": "bob", "staff": False, "memberships": [("team-speech", TenantMembership.Role.EDITOR)]},
]

# Workload shapes: (label, pod sets, duration range in minutes)
GPU_SHAPES = [
    ("1gpu", [{"count": 1, "requests": {GPU: "1", "cpu": "8", "memory": "64Gi"}}], (10, 90)),
    ("2gpu", [{"count": 1, "requests": {GPU: "2", "cpu": "16", "memory": "128Gi"}}], (20, 180)),
    ("4gpu", [{"count": 2, "requests": {GPU: "2", "cpu": "12", "memory": "96Gi"}}], (30, 240)),
    ("8gpu", [{"count": 2, "requests": {GPU: "4", "cpu": "24", "memory": "192Gi"}}], (60, 360)),
]
CPU_SHAPES = [
    ("small", [{"count": 1, "requests": {"cpu": "2", "memory": "4Gi"}}], (5, 30)),
    ("medium", [{"count": 4, "requests": {"cpu": "2", "memory": "8Gi"}}], (15, 120)),
    ("large", [{"count": 8, "requests": {"cpu": "4", "memory": "16Gi"}}], (30, 240)),
    ("tiny", [{"count": 1, "requests": {"cpu": "500m", "memory": "1Gi"}}], (2, 15)),
]
FINISHED_PER_QUEUE = 10
PENDING_PER_QUEUE = 12


@dataclass(frozen=True)
class SeedReport:
    created_workloads: int
    total_workloads: int
    local_queues: int
    logins: list[tuple[str, str]]


@overload
def _millis(text: str) -> int: ...
@overload
def _millis(text: None) -> None: ...
def _millis(text: str | None) -> int | None:
    return None if text is None else parse_millis(text)


def _seed_policy() -> dict[str, LocalQueue]:
    for name, description in FLAVORS.items():
        ResourceFlavor.objects.update_or_create(name=name, defaults={"description": description})
    flavors = {f.name: f for f in ResourceFlavor.objects.all()}
    for name, (value, description) in PRIORITY_CLASSES.items():
        WorkloadPriorityClass.objects.update_or_create(name=name, defaults={"value": value, "description": description})

    cohorts: dict[str, Cohort] = {}
    for name, (parent, weight, mode, quotas) in COHORTS.items():
        cohort, _ = Cohort.objects.update_or_create(
            name=name,
            defaults={
                "parent": cohorts.get(parent) if parent else None,
                "weight": Decimal(weight),
                "admission_mode": mode,
            },
        )
        cohorts[name] = cohort
        for flavor, resource, nominal in quotas:
            CohortQuota.objects.update_or_create(
                cohort=cohort, flavor=flavors[flavor], resource=resource, defaults={"nominal": _millis(nominal)}
            )

    cluster_queues: dict[str, ClusterQueue] = {}
    for name, spec in CLUSTER_QUEUES.items():
        cq, _ = ClusterQueue.objects.update_or_create(
            name=name,
            defaults={
                "cohort": cohorts[spec["cohort"]],
                "weight": Decimal(spec["weight"]),
                "queueing_strategy": spec["strategy"],
                "admission_mode": spec["mode"],
                "preemption_within_cluster_queue": spec["within"],
                "reclaim_within_cohort": spec["reclaim"],
            },
        )
        cluster_queues[name] = cq
        order = {flavor: rank for rank, flavor in enumerate(dict.fromkeys(q[0] for q in spec["quotas"]))}
        for flavor, resource, nominal, borrow, lend in spec["quotas"]:
            ClusterQueueQuota.objects.update_or_create(
                cluster_queue=cq,
                flavor=flavors[flavor],
                resource=resource,
                defaults={
                    "nominal": _millis(nominal),
                    "borrowing_limit": _millis(borrow),
                    "lending_limit": _millis(lend),
                    "flavor_order": order[flavor],
                },
            )

    local_queues: dict[str, LocalQueue] = {}
    for ns_name, (weight, hard, lqs) in NAMESPACES.items():
        namespace, _ = Namespace.objects.update_or_create(
            name=ns_name,
            defaults={
                "weight": Decimal(weight),
                "allowed_priority_classes": ALLOWED_PRIORITY_CLASSES.get(ns_name, DEFAULT_ALLOWED_CLASSES),
                "default_priority_class": WorkloadPriorityClass.objects.get(name=DEFAULT_PRIORITY_CLASS),
            },
        )
        for resource, amount in hard.items():
            NamespaceQuota.objects.update_or_create(
                namespace=namespace, resource=resource, defaults={"hard": _millis(amount)}
            )
        for lq_name, cq_name, lq_weight in lqs:
            lq, _ = LocalQueue.objects.get_or_create(
                namespace=namespace,
                name=lq_name,
                defaults={"cluster_queue": cluster_queues[cq_name], "weight": Decimal(lq_weight)},
            )
            local_queues[lq.key] = lq
    return local_queues


@dataclass(frozen=True)
class DemoExtra:
    """What another app adds to the demo (budgets: its budgets): ``seed`` runs in the seeding
    transaction right after the queues, given them by ``namespace/name``; ``after_history`` once the
    history is stored."""

    seed: Callable[[dict[str, LocalQueue]], object]
    after_history: Callable[[], object] = lambda: None


# An app's part of the demo: apps register it from ``AppConfig.ready`` with
# ``core.extensions.register(DEMO_EXTRAS, name, extra)`` (idempotent by name).
DEMO_EXTRAS: ExtensionPoint[DemoExtra] = ExtensionPoint("demo extras")


KEPT_PASSWORD = "(unchanged)"


def demo_password(username: str) -> str:
    """``admin``/``admin`` only on a DEBUG machine; a random password anywhere else."""
    return username if settings.DEBUG else secrets.token_urlsafe(12)


def _seed_users() -> list[tuple[str, str]]:
    """Creates the demo users; the logins list new passwords, ``(unchanged)`` for existing users."""
    user_model = get_user_model()
    logins = []
    for spec in USERS:
        user, created = user_model.objects.get_or_create(
            username=spec["username"],
            defaults={
                "is_staff": spec["staff"],
                "is_superuser": spec["staff"],
                "email": f"{spec['username']}@example.org",
            },
        )
        password = KEPT_PASSWORD
        if created:
            password = demo_password(spec["username"])
            user.set_password(password)
            user.save(update_fields=["password"])
        for ns_name, role in spec["memberships"]:
            TenantMembership.objects.update_or_create(
                user=user, namespace=Namespace.objects.get(name=ns_name), defaults={"role": role}
            )
        logins.append((spec["username"], password))
    return logins


NewWorkload = tuple[Workload, dict[str, int], dict[str, str]]


def _build_workloads(local_queues: dict[str, LocalQueue], arrival_seconds: int = 3600) -> list[NewWorkload]:
    """Finished history over the last two days and pending work, unsaved; skips names that exist."""
    rng = random.Random(SEED)
    now = timezone.now().replace(microsecond=0)
    existing = set(Workload.objects.values_list("namespace__name", "name"))
    built: list[NewWorkload] = []
    for _key, lq in sorted(local_queues.items()):
        gpu_queue = lq.cluster_queue.name.startswith("gpu")
        shapes = GPU_SHAPES if gpu_queue else CPU_SHAPES
        first_flavor = "a100" if gpu_queue else "default"
        for index in range(FINISHED_PER_QUEUE + PENDING_PER_QUEUE):
            label, pod_sets, (low, high) = shapes[rng.randrange(len(shapes))]
            duration = rng.randint(low, high) * 60
            priority = rng.choice([0, 0, 0, 10, 100])
            if lq.namespace.name in ALLOWED_PRIORITY_CLASSES:
                priority = 0  # its only class
            name = f"{lq.name}-{label}-{index:03d}"
            finished = index < FINISHED_PER_QUEUE
            if finished:
                admitted_at = now - timedelta(seconds=rng.randint(duration + 600, 2 * 86400))
                queued_at = admitted_at - timedelta(seconds=rng.randint(0, 3600))
            else:
                queued_at = now - timedelta(seconds=rng.randint(0, arrival_seconds))
            if (lq.namespace.name, name) in existing:
                continue
            normalised = normalise_pod_sets(pod_sets)
            workload = new_workload(
                lq,
                name,
                normalised,
                priority=priority,
                priority_class=CLASS_OF_PRIORITY[priority],
                duration_seconds=duration,
                created_at=queued_at,
                queued_at=queued_at,
            )
            assignment: dict[str, str] = {}
            if finished:
                assignment = dict.fromkeys(total_requests(normalised), first_flavor)
                workload.state = WorkloadState.FINISHED
                workload.cluster_queue = lq.cluster_queue
                workload.flavor_assignment = assignment
                workload.admitted_at = admitted_at
                workload.started_at = admitted_at
                workload.finished_at = admitted_at + timedelta(seconds=duration)
                workload.wall_time_seconds = duration
            built.append((workload, total_requests(normalised), assignment))
    return built


def _save_workloads(items: list[NewWorkload]) -> int:
    """Workloads with their resource rows (and admission intervals for finished history)."""
    if not items:
        return 0
    flavor_ids = dict(ResourceFlavor.objects.values_list("name", "id"))
    with transaction.atomic():
        created = Workload.objects.bulk_create([workload for workload, _, _ in items], batch_size=500)
        usage_counters.move(  # bulk_create bypasses the submission path that keeps the counts
            (
                workload.local_queue_id,
                int(workload.state == WorkloadState.ADMITTED),
                int(workload.state == WorkloadState.PENDING),
            )
            for workload in created
        )
        WorkloadResource.objects.bulk_create(
            [
                WorkloadResource(
                    workload=workload,
                    resource=resource,
                    amount=amount,
                    flavor_id=flavor_ids.get(assignment.get(resource, "")),
                )
                for workload, (_, totals, assignment) in zip(created, items)
                for resource, amount in totals.items()
            ],
            batch_size=1000,
        )
        AdmissionRecord.objects.bulk_create(
            [
                AdmissionRecord(  # type: ignore[misc]  # the demo's history rows were all admitted
                    workload=workload,
                    namespace_id=workload.namespace_id,
                    local_queue_id=workload.local_queue_id,
                    cluster_queue_id=workload.cluster_queue_id,
                    assignment=workload.flavor_assignment,
                    requests=total_requests(workload.pod_sets),
                    admitted_at=workload.admitted_at,
                    ended_at=workload.finished_at,
                    end_reason=AdmissionRecord.EndReason.FINISHED,
                )
                for workload in created
                if workload.state == WorkloadState.FINISHED
            ],
            batch_size=1000,
        )
    return len(created)


def replay_history(
    seconds: int,
    arrivals: list[NewWorkload],
    *,
    end: datetime | None = None,
    events: list[tuple[datetime, Callable[[datetime], None]]] | None = None,
) -> int:
    """Run the control loop's own services at past moments, one sampling interval apart.

    Each workload of ``arrivals`` is submitted at the step its queue timestamp falls in; then
    the simulated cluster, admission passes and usage samples run exactly as beat would have
    run them, so the usage series, admissions and finished work are real loop output, not
    drawn by hand. ``events`` (a moment and what to do then, given the step's moment: policy
    changes) run at the first step at or after their moment, before that step's pass. Returns
    the number of samples taken.
    """
    from django.conf import settings

    from queues.admission.passes import run_all_admission_passes
    from queues.services.cluster import complete_due_workloads
    from queues.services.usage import sample_usage

    end = end or timezone.now()
    step = timedelta(seconds=settings.FAIR_SHARING.usage_sampling_interval_seconds)
    moment = end - timedelta(seconds=seconds)
    waiting = sorted(arrivals, key=lambda item: item[0].queued_at)
    planned = sorted(events or [], key=lambda event: event[0])
    samples = 0
    while moment <= end:
        due = [item for item in waiting if item[0].queued_at <= moment]
        waiting = waiting[len(due) :]
        _save_workloads(due)
        while planned and planned[0][0] <= moment:
            planned.pop(0)[1](moment)
        complete_due_workloads(now=moment)
        run_all_admission_passes(now=moment)
        samples += int(sample_usage(now=moment).sampled)
        moment += step
    _save_workloads(waiting)
    return samples


def seed_demo(*, history_seconds: int = 0) -> SeedReport:
    """Load the demo; with ``history_seconds``, pending work arrives over that span and the
    control loop is replayed over it, so charts and budgets have a past from the first page, and
    the admin makes the ``POLICY_STORY`` changes on the way (audited, so the audit log and the
    charts' policy markers show them; once per database). Without a history nothing is audited."""
    with transaction.atomic():
        local_queues = _seed_policy()
        for _, extra in extensions.items(DEMO_EXTRAS):
            extra.seed(local_queues)
        logins = _seed_users()
        items = _build_workloads(local_queues, arrival_seconds=history_seconds or 3600)
        history = [item for item in items if item[0].state == WorkloadState.FINISHED]
        arrivals = [item for item in items if item[0].state == WorkloadState.PENDING]
        if not history_seconds:
            history, arrivals = items, []
        created = _save_workloads(history)
        story = bool(history_seconds) and _start_policy_story()
    if arrivals:
        end = timezone.now()
        events = _policy_story_events(end - timedelta(seconds=history_seconds), history_seconds) if story else []
        replay_history(history_seconds, arrivals, end=end, events=events)
        created += len(arrivals)
    for _, extra in extensions.items(DEMO_EXTRAS):
        extra.after_history()
    return SeedReport(
        created_workloads=created,
        total_workloads=Workload.objects.count(),
        local_queues=len(local_queues),
        logins=logins,
    )
