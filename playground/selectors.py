"""Reads for the playground's pages and API: what a user may see, with what it needs joined."""

from __future__ import annotations

from django.db.models import Count, Prefetch, QuerySet

from core.access import Access
from playground.models import Application, Run, Scenario


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
