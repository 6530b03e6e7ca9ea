"""Playground pages: start (live, preset, upload), edit and run, watch progress, compare, apply.

Thin: forms carry input, services decide, selectors scope (another user's scenario or run is a
404), charts draw. Every page needs a signed-in admin or tenant, except the estimated start of a
pending workload at the end: a fragment of the queues pages, under their rules.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from core.access import Access, access_for
from core.downloads import attachment, name_attachment
from fairshare.durations import format_duration, parse_duration
from fairshare.errors import ValidationError
from playground import charts, documents, editor, exports, history, selectors
from playground.documents import EditError
from playground.forms import EditForm, StartForm
from playground.live_export import LiveOptions
from playground.models import Run, Scenario
from playground.policy_diff import DATABASE, ENVIRONMENT, SIMULATION, PolicyDelta, by_target
from playground.presets import PRESETS, get_preset
from playground.services import runs, scenarios
from playground.services.apply import ApplyError, apply_blockers, apply_run
from playground.services.estimate import estimate_for
from playground.services.lane import StorageQuotaExceeded, WhatIfLimitReached
from queues.selectors.structure import load_structure
from queues.selectors.workloads import workload_detail
from queues.ui.views.common import DashboardRequest, dashboard_view

RESENDABLE_AFTER_SECONDS = 10


def playground_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Signed in, and an admin or a tenant; ``request.access`` holds the roles."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        access = access_for(request.user)
        if not access.can_use_playground:
            raise PermissionDenied("The playground is for admins and tenants.")
        request.access = access  # type: ignore[attr-defined]
        return view(request, *args, **kwargs)

    return wrapper


def _access(request: HttpRequest) -> Access:
    return request.access  # type: ignore[attr-defined]


# --- start --------------------------------------------------------------------------------------


@playground_view
def index(request: HttpRequest) -> HttpResponse:
    """Where a what-if starts; ``?from=localqueue:12`` (the dashboard's "try in playground
    first" link) preselects today's cluster and that object's weight."""
    focus = selectors.focus_path(request.GET.get("from", ""), _access(request))
    form = StartForm(initial={"source": "live" if focus else "preset", "focus": focus, "preset": PRESETS[0].slug})
    return _render_index(request, form)


def _render_index(request: HttpRequest, form: StartForm, status: int = 200) -> HttpResponse:
    access = _access(request)
    context = {
        "form": form,
        "presets": PRESETS,
        "runs": selectors.visible_runs(access)[:12],
        "scenarios": selectors.visible_scenarios(access)[:12],
        "access": access,
    }
    return render(request, "playground/index.html", context, status=status)


@require_POST
@playground_view
def start(request: HttpRequest) -> HttpResponse:
    form = StartForm(request.POST, request.FILES)
    if not form.is_valid():
        return _render_index(request, form, status=400)
    data = form.cleaned_data
    try:
        if data["source"] == "preset":
            scenario = scenarios.create_from_preset(data["preset"], owner=request.user)
        elif data["source"] == "history":
            upload = data["history_file"]
            document = history.history_scenario(
                upload.read(history.MAX_HISTORY_BYTES + 1),
                data.get("history_format") or None,
                name=(upload.name or "history").rsplit(".", 1)[0],
                layout=data.get("history_layout") or "account",
                mode=data.get("history_mode") or "NoAdmissionFairSharing",
            )
            scenario = scenarios.create_from_document(document, owner=request.user)
        elif data["source"] == "upload":
            upload = data.get("file")
            if upload is not None:
                scenario = scenarios.create_from_text(upload.read(), owner=request.user, filename=upload.name)
            else:
                scenario = scenarios.create_from_text(data["text"], owner=request.user)
        else:
            days = 1.0 if data.get("days") is None else data["days"]
            lookahead = parse_duration(data.get("lookahead") or "6h", "lookahead")
            options = LiveOptions(days=days, lookahead_seconds=lookahead)
            scenario = scenarios.create_from_live(_access(request), options=options)
    except ValidationError as error:
        form.add_error(form.error_field_for(error.field), str(error))
        return _render_index(request, form, status=400)
    except StorageQuotaExceeded as quota:
        form.add_error(None, str(quota))
        return _render_index(request, form, status=400)
    url = reverse("playground:scenario", args=[scenario.pk])
    if data.get("focus"):
        url += "?" + urlencode({"focus": data["focus"]})
    return redirect(url)


# --- a scenario: edit and run -----------------------------------------------------------------


@playground_view
def scenario_detail(request: HttpRequest, pk: Any) -> HttpResponse:
    scenario = get_object_or_404(selectors.visible_scenarios(_access(request)).defer(None), pk=pk)
    parsed = documents.validate(scenario.document)
    editable = editor.editable_fields(parsed)
    if request.method == "POST":
        form = EditForm(request.POST, editable=editable)
        if form.is_valid():
            edits = editor.edits_from(editable, form.submitted()) + form.extra_lines()
            try:
                run = runs.start_run(scenario, edits=edits, owner=request.user, title=form.cleaned_data["title"])
            except EditError as error:
                form.add_edit_error(error.path, error.problem)
            except (WhatIfLimitReached, StorageQuotaExceeded) as limit:
                form.add_error(None, str(limit))
            else:
                return redirect("playground:run", pk=run.pk)
        status = 400
    else:
        form = EditForm(editable=editable, prefill=_prefill(request, scenario, editable))
        status = 200
    context = {
        "scenario": scenario,
        "parsed": parsed,
        "form": form,
        "groups": [
            (group, [(owner, [(spec, form.bound(spec)) for spec in specs]) for owner, specs in rows])
            for group, rows in editor.grouped(editable)
        ],
        "focus": request.GET.get("focus", ""),
        "preset": get_preset(scenario.preset) if scenario.preset else None,
        "runs": selectors.visible_runs(_access(request)).filter(scenario=scenario)[:20],
        "facts": _facts(parsed),
    }
    return render(request, "playground/scenario.html", context, status=status)


def _prefill(request: HttpRequest, scenario: Scenario, editable: list[editor.EditableField]) -> dict[str, str]:
    """Inputs to show changed: a previous run's edits (``?run=``), else a preset's suggestion."""
    edits: list[str] = []
    previous = request.GET.get("run")
    if previous:
        run = (
            selectors.visible_runs(_access(request)).filter(pk=previous, scenario=scenario).first()
            if _is_uuid(previous)
            else None
        )
        edits = list(run.edits) if run else []
    elif scenario.preset and not scenario.runs.exists():
        preset = get_preset(scenario.preset)
        edits = list(preset.suggested_edits) if preset else []
    paths = {spec.path for spec in editable}
    return {path: value for path, _, value in (e.partition("=") for e in edits) if path in paths}


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def _facts(parsed: Any) -> dict[str, Any]:
    clock = parsed.clock
    return {
        "cohorts": len(parsed.cohorts),
        "cluster_queues": len(parsed.cluster_queues),
        "namespaces": len(parsed.namespaces),
        "local_queues": len(parsed.local_queues),
        "budgets": len(parsed.budgets),
        "workloads": documents.workload_count(parsed),
        "horizon": "until the work is done"
        if clock.horizon_seconds is None
        else format_duration(clock.horizon_seconds),
        "tick": format_duration(clock.tick_seconds),
    }


@require_GET
@playground_view
def scenario_yaml(request: HttpRequest, pk: Any) -> HttpResponse:
    scenario = get_object_or_404(selectors.visible_scenarios(_access(request)).defer(None), pk=pk)
    return attachment(documents.to_yaml(scenario.document), f"{scenario.name}.yaml", "application/yaml")


# --- a run ------------------------------------------------------------------------------------


def _visible_run(request: HttpRequest, pk: Any, *, comparison: bool = False) -> Run:
    queryset = selectors.visible_runs(_access(request))
    if comparison:
        queryset = selectors.with_comparison(queryset)
    return get_object_or_404(queryset, pk=pk)


@playground_view
def run_detail(request: HttpRequest, pk: Any) -> HttpResponse:
    run = _visible_run(request, pk, comparison=True)
    view = run.comparison
    resource = request.GET.get("resource") or (charts.default_resource(view) if view else None)
    if view and resource not in charts.resources_of(view):
        resource = charts.default_resource(view)
    deltas = by_target(PolicyDelta.from_dict(d) for d in run.deltas)
    applications = list(run.applications.all())
    can_apply = (
        _access(request).can_apply_runs
        and run.status == Run.Status.SUCCEEDED
        and bool(deltas[DATABASE])
        and not run.scenario.redacted
        and not applications
    )
    context = {
        "run": run,
        "view": view,
        "figures": charts.all_figures(view, resource) if view else None,
        "resource": resource,
        "resources": charts.resources_of(view) if view else [],
        "deltas": deltas,
        "DATABASE": DATABASE,
        "ENVIRONMENT": ENVIRONMENT,
        "SIMULATION": SIMULATION,
        # Once applied, the run is history: a later change is a new run from today's cluster.
        "live_budgets": selectors.live_budgets(_access(request), run) if view and view.get("budgets") else {},
        "can_apply": can_apply,
        "apply_blockers": apply_blockers(deltas[DATABASE]) if can_apply else [],
        "applications": applications,
        "moved_rows": (view or {}).get("moved", {}).get("rows", [])[:50],
        "stuck": _stuck(run),
        "access": _access(request),
        "elapsed": (run.finished_at - run.started_at).total_seconds() if run.finished_at and run.started_at else None,
    }
    return render(request, "playground/run.html", context)


def _stuck(run: Run) -> bool:
    return (
        run.status == Run.Status.QUEUED and (timezone.now() - run.created_at).total_seconds() > RESENDABLE_AFTER_SECONDS
    )


@require_GET
@playground_view
def run_status(request: HttpRequest, pk: Any) -> JsonResponse:
    """What the run page polls while a worker simulates."""
    run = _visible_run(request, pk)
    return JsonResponse(
        {
            "status": run.status,
            "phase": run.phase,
            "phaseLabel": run.get_phase_display(),
            "progress": run.progress,
            "error": run.error,
            "done": run.is_done,
            "stuck": _stuck(run),
        }
    )


@require_POST
@playground_view
def run_resend(request: HttpRequest, pk: Any) -> HttpResponse:
    run = _visible_run(request, pk)
    if runs.resend(run):
        messages.info(request, "Sent to the workers again.")
    return redirect("playground:run", pk=run.pk)


@require_POST
@playground_view
def run_apply(request: HttpRequest, pk: Any) -> HttpResponse:
    run = _visible_run(request, pk)
    if not _access(request).can_apply_runs:
        raise PermissionDenied("Only admins can apply a playground run.")
    if request.POST.get("confirm") != "yes":
        messages.error(request, "Tick the box to confirm the changes before applying them.")
        return redirect("playground:run", pk=run.pk)
    try:
        application = apply_run(run, actor=request.user)
    except ApplyError as error:
        for problem in error.problems:
            messages.error(request, problem)
    else:
        count = application.policy_changes.count()
        messages.success(request, f"Applied: {count} object{'s' if count != 1 else ''} changed, each in the audit log.")
    return redirect("playground:run", pk=run.pk)


@require_GET
@playground_view
def run_results(request: HttpRequest, pk: Any) -> HttpResponse:
    run = _visible_run(request, pk, comparison=True)
    if run.status != Run.Status.SUCCEEDED:
        raise Http404("The run has no results yet.")
    return name_attachment(JsonResponse(exports.results_document(run)), f"playground-run-{run.pk}.json")


@require_GET
@playground_view
def run_csv(request: HttpRequest, pk: Any) -> HttpResponse:
    run = _visible_run(request, pk)
    if run.status != Run.Status.SUCCEEDED:
        raise Http404("The run has no results yet.")
    return attachment(exports.workloads_csv(run), f"playground-run-{run.pk}-workloads.csv", "text/csv")


@require_GET
@playground_view
def run_edited_yaml(request: HttpRequest, pk: Any) -> HttpResponse:
    run = _visible_run(request, pk)
    try:
        text = exports.edited_yaml(run)
    except (EditError, ValidationError) as error:
        raise Http404(str(error)) from None
    return attachment(text, f"{run.scenario.name}-edited.yaml", "application/yaml")


# --- a workload's estimated start -------------------------------------------------------------
# The workload page (queues) fetches this fragment by its url name ``workload-estimate``, routed
# in ``fairportal/urls.py`` so that queues never imports the playground.


@dashboard_view
def workload_estimate(request: DashboardRequest, namespace: str, name: str) -> HttpResponse:
    """The estimated start of a pending workload, as an HTML fragment the workload page fetches
    after it is drawn (the replay may take a moment; the page itself never waits for it)."""
    detail = workload_detail(request.viewer, namespace, name, load_structure())
    if detail is None:
        raise Http404("No such workload")
    return render(request, "queues/workloads/_estimate.html", {"estimate": estimate_for(detail.workload)})
