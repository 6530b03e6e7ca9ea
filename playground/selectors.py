"""Reads for the playground's pages and API: what a user may see, with what it needs joined; the
single simulations of ``/api/v1/simulations/``; what a dashboard link names; live budget status."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import Count, Prefetch, QuerySet

from budgets.models import Budget
from core.access import Access
from playground.models import Application, Run, Scenario
from queues.models import ClusterQueue, Cohort, LocalQueue, Namespace


def visible_scenarios(access: Access) -> QuerySet[Scenario]:
    """Every scenario for admins; a user's own otherwise (without the large document). Scenarios
    posted to ``/api/v1/simulations/`` are that endpoint's, not the playground's."""
    rows = (
        Scenario.objects.exclude(source=Scenario.Source.API)
        .select_related("owner")
        .defer("document")
        .annotate(run_count=Count("runs"))
        .order_by("-created_at", "-id")  # GROUP BY drops the Meta ordering: say it again for stable pages
    )
    return access.visible_to(rows)


def visible_runs(access: Access) -> QuerySet[Run]:
    """Runs the user may open: all for admins, their own otherwise. The comparison (large) is
    deferred; detail reads ask for it with ``with_comparison``. Single simulations (runs of a
    scenario posted to ``/api/v1/simulations/``) are that endpoint's."""
    rows = (
        Run.objects.exclude(scenario__source=Scenario.Source.API)
        .select_related("scenario", "owner")
        .defer("comparison", "scenario__document")
        .prefetch_related(Prefetch("applications", queryset=Application.objects.select_related("actor")))
    )
    return access.visible_to(rows)


def with_comparison(runs: QuerySet[Run]) -> QuerySet[Run]:
    return runs.defer(None).defer("scenario__document")


def simulation_runs() -> QuerySet[Run]:
    """Every single simulation (``/api/v1/simulations/``; the API scopes them to their owner, or
    all for admins)."""
    return Run.objects.filter(scenario__source=Scenario.Source.API).select_related("scenario")


# What a dashboard link may name (``kind:id``): the rows, and the edit path of the one found.
_FOCUS: dict[str, tuple[Callable[[], Any], Callable[[Any], str]]] = {
    "localqueue": (lambda: LocalQueue.objects.select_related("namespace"), lambda lq: f"localQueues.{lq.key}.weight"),
    "namespace": (lambda: Namespace.objects.all(), lambda ns: f"namespaces.{ns.name}.weight"),
    "budget": (lambda: Budget.objects.all(), lambda budget: f"budgets.{budget.name}.allocatedHours"),
    "clusterqueue": (lambda: ClusterQueue.objects.all(), lambda cq: f"clusterQueues.{cq.name}.weight"),
    "cohort": (lambda: Cohort.objects.all(), lambda cohort: f"cohorts.{cohort.name}.weight"),
}


def focus_path(reference: str, access: Access) -> str:
    """The edit path of the object a dashboard link names (``localqueue:12``), or ''.

    Tenants resolve only what they may see (``Access.visible_to``): their namespaces, their
    LocalQueues, the budgets that can hold their work (ClusterQueue budgets included), and the
    cluster-wide cohorts and ClusterQueues; another tenant's object resolves to ''.
    """
    kind, _, pk = reference.partition(":")
    if not pk.isdigit() or kind not in _FOCUS:
        return ""
    rows, path = _FOCUS[kind]
    found = access.visible_to(rows()).filter(pk=pk).first()
    return path(found) if found else ""


def live_budgets(access: Access, run: Run) -> dict[str, Any]:
    """For a run of today's cluster, each budget's status as the budget pages show it now (the
    same ``budgets.status`` state and forecast), keyed by name; other sources have none."""
    if run.scenario.source != Scenario.Source.LIVE or run.scenario.redacted:
        return {}
    from budgets.selectors import budgets_with_status

    return {budget.name: status for budget, status in budgets_with_status(access)}
