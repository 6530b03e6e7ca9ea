"""The demo's budgets (``manage.py seed_demo``), registered with ``queues.demo`` in ``BudgetsConfig.ready``."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.utils import timezone

from budgets.models import Budget
from budgets.services import reconcile_all_budgets
from queues.demo import GPU
from queues.models import ClusterQueue, LocalQueue, Namespace, ResourceFlavor

BUDGETS: list[dict[str, Any]] = [
    {
        "name": "vision-gpu-hours",
        "lq": ("team-vision", "training"),
        "kind": Budget.Kind.RESOURCE_HOURS,
        "resource": GPU,
        "hours": "2000",
        "renewal": Budget.Renewal.MONTHLY,
        "action": Budget.Action.HOLD,
    },
    {
        "name": "speech-wall-time",
        "lq": ("team-speech", "training"),
        "kind": Budget.Kind.WALL_TIME,
        "resource": "",
        "hours": "300",
        "renewal": Budget.Renewal.MONTHLY,
        "action": Budget.Action.HOLD_AND_DRAIN,
    },
    {
        "name": "interns-weekly",
        "ns": "team-interns",
        "kind": Budget.Kind.WALL_TIME,
        "resource": "",
        "hours": "40",
        "renewal": Budget.Renewal.WEEKLY,
        "action": Budget.Action.HOLD,
        "thresholds": [50, 80, 100],
    },
    {
        "name": "inference-a100-hours",
        "cq": "gpu-inference",
        "kind": Budget.Kind.RESOURCE_HOURS,
        "resource": GPU,
        "flavor": "a100",
        "hours": "5000",
        "renewal": Budget.Renewal.MONTHLY,
        "action": Budget.Action.HOLD,
    },
]


def seed_budgets(local_queues: dict[str, LocalQueue]) -> None:
    period_start = timezone.now().replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    for spec in BUDGETS:
        target: dict[str, Any] = {"local_queue": None, "namespace": None, "cluster_queue": None}
        if "lq" in spec:
            target["local_queue"] = local_queues["/".join(spec["lq"])]
        elif "ns" in spec:
            target["namespace"] = Namespace.objects.get(name=spec["ns"])
        else:
            target["cluster_queue"] = ClusterQueue.objects.get(name=spec["cq"])
        flavor = ResourceFlavor.objects.get(name=spec["flavor"]) if spec.get("flavor") else None
        Budget.objects.update_or_create(
            name=spec["name"],
            defaults={
                **target,
                "kind": spec["kind"],
                "resource": spec["resource"],
                "flavor": flavor,
                "allocated_hours": Decimal(spec["hours"]),
                "renewal": spec["renewal"],
                "action": spec["action"],
                "anchor": period_start,
                "alert_thresholds": spec.get("thresholds", [80, 100]),
            },
        )


def charge_history() -> None:
    """Charge the finished history to the budgets now, so their pages have data from the start
    (the beat schedule would do it within BUDGET_ACCOUNTING_INTERVAL anyway)."""
    reconcile_all_budgets()
