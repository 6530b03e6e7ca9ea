"""What tenants do on the dashboard: submit a workload to a LocalQueue and cancel one.

The same rule and the same services as the REST API (``queues.api.views.workloads``):

- Who: admins, and editors of the LocalQueue's (or workload's) namespace
  (``Access.can_edit_namespace``). Another tenant's LocalQueue or workload is a 404 that names
  nothing; a viewer or an executor of a visible one gets a 403.
- Submit: ``resolve_priority`` (the classes the namespace was granted), then ``submit_once``
  around ``submit_checked`` (quota coverage, model validation, the Slurm job when a command is
  given, the admission pass asked for after the commit). The form carries an idempotency key made
  when it was opened, so posting it twice (a double click, a reload) gives the first workload back
  instead of a second one or a "name taken" error.
- Cancel: ``lifecycle.cancel_workload``, after a confirmation page (a GET), so it works without
  JavaScript; a workload that ended meanwhile answers 409 with the state it is in.

Errors come back as form errors on the field they name (400; 503 when the cluster did not answer).
What a tenant may edit of a workload: nothing (the API has no update for workloads: pod sets,
queue and priority are fixed at submission); of a LocalQueue, its stop policy and description
(``queues.ui.views.policy``).
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib import messages
from django.core.exceptions import NON_FIELD_ERRORS, PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db import IntegrityError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone

from queues import backends
from queues.backends import BackendUnavailable, CommandRunner
from queues.models import LocalQueue, Workload, WorkloadState, default_cluster
from queues.selectors.submission import submit_options, submittable_local_queues, visible_local_queue
from queues.services import lifecycle
from queues.services.errors import IdempotencyKeyReused, InvalidTransition
from queues.services.submission import queue_clusters, request_fingerprint, submit_checked, submit_once
from queues.services.workloads import resolve_priority
from queues.ui.submit_forms import CancelForm, WorkloadSubmitForm, new_submission_key
from queues.ui.views.common import DashboardRequest, dashboard_view

CHOOSER_PAGE_SIZE = 50
CANCELLABLE = (WorkloadState.PENDING, WorkloadState.ADMITTED)
# The services' field names that the form calls otherwise.
_FORM_FIELD = {"duration_seconds": "duration", "max_runtime_seconds": "max_runtime"}
_REQUEST_OF = re.compile(r"\.requests\.([^:\s]+):")


def suggested_name(local_queue: LocalQueue) -> str:
    """``<queue>-<MMDD-HHMMSS>``: a valid, probably unused name to start from."""
    stamp = timezone.localtime().strftime("%m%d-%H%M%S")
    return f"{local_queue.name[: 63 - len(stamp) - 1]}-{stamp}"


def runs_commands(local_queue: LocalQueue) -> bool:
    """Whether every cluster the LocalQueue's work may run on runs a command per job (Slurm), so
    the form asks for one: the clusters of its ClusterQueue's flavors (one query), else the
    default cluster; the same rule ``submit_checked`` applies to a submitted command."""
    clusters = queue_clusters(local_queue.cluster_queue_id) or [default_cluster()]
    return all(isinstance(backends.backend_for(cluster), CommandRunner) for cluster in clusters)


@dashboard_view
def choose_local_queue(request: DashboardRequest) -> HttpResponse:
    """Where to submit: the LocalQueues the viewer may submit to, each linking to its form."""
    page = Paginator(submittable_local_queues(request.viewer), CHOOSER_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "queues/actions/choose.html",
        {"page": page, "local_queues": list(page.object_list), "viewer": request.viewer},
    )


@dashboard_view
def submit_workload(request: DashboardRequest, namespace: str, name: str) -> HttpResponse:
    viewer = request.viewer
    local_queue = visible_local_queue(viewer, namespace, name)
    if local_queue is None:
        raise Http404("No such LocalQueue")
    if not viewer.can_edit_namespace(local_queue.namespace_id):
        raise PermissionDenied("Submitting needs the editor role in the LocalQueue's namespace")
    options = submit_options(viewer, local_queue)
    form = WorkloadSubmitForm(
        request.POST if request.method == "POST" else None,
        options=options,
        is_admin=viewer.is_admin,
        runs_commands=runs_commands(local_queue),
        initial={"name": suggested_name(local_queue), "count": 1, "submission_key": new_submission_key()},
    )
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                workload, replayed = _submit(request, form, local_queue)
            except ValidationError as error:
                _attach(form, error)
            except IdempotencyKeyReused:
                form.add_error(
                    None, "This form was already used for another submission: reload the page to submit again."
                )
            except IntegrityError:  # the name was taken between the check and the INSERT
                form.add_error("name", f"namespace {local_queue.namespace.name} already has a workload with this name")
            except BackendUnavailable:
                form.add_error(
                    "command" if "command" in form.fields else None,
                    "The cluster did not answer; nothing was submitted. Try again in a moment.",
                )
                status = 503
            else:
                verb = "was already submitted" if replayed else "submitted"
                messages.success(
                    request, f"{workload.namespace.name}/{workload.name} {verb} to LocalQueue {local_queue.key}."
                )
                return redirect("queues:workload", workload.namespace.name, workload.name)
    context = {
        "form": form,
        "options": options,
        "obj": local_queue,
        "viewer": viewer,
        "back": reverse("queues:local-queue", args=[local_queue.namespace.name, local_queue.name]),
    }
    return render(request, "queues/actions/submit.html", context, status=status)


def _submit(request: DashboardRequest, form: WorkloadSubmitForm, local_queue: LocalQueue) -> tuple[Workload, bool]:
    data = form.cleaned_data
    priority, priority_class = resolve_priority(
        local_queue,
        priority_class=data.get("priority_class") or None,
        priority=data.get("priority"),
        is_admin=request.viewer.is_admin,
    )
    fields: dict[str, Any] = {
        "name": data["name"],
        "pod_sets": form.pod_sets(),
        "priority": priority,
        "priority_class": priority_class,
        "duration_seconds": data.get("duration"),
        "max_runtime_seconds": data.get("max_runtime"),
    }
    if data.get("command"):
        fields["command"] = data["command"]
    result = submit_once(
        user=request.user,
        key=data["submission_key"],
        fingerprint=request_fingerprint(form.fingerprint_body()),
        submit=lambda: submit_checked(local_queue=local_queue, **fields),
    )
    return result.workload, result.replayed


def _attach(form: WorkloadSubmitForm, error: ValidationError) -> None:
    """The services' errors onto the form's fields: a request's error onto its resource's field, a
    taken name onto ``name``, anything the form has no field for above the form."""
    if not hasattr(error, "error_dict"):
        form.add_error(None, error.messages)
        return
    for key, errors in error.error_dict.items():
        for item in errors:
            message = " ".join(item.messages)
            target: str | None = _FORM_FIELD.get(key, key)
            if key == NON_FIELD_ERRORS and item.code == "unique_together":
                target = "name"
                message = f"namespace {form.options.local_queue.namespace.name} already has a workload with this name"
            elif key == "pod_sets":
                found = _REQUEST_OF.search(message)
                target = form.field_of_resource(found.group(1)) if found else None
                if found:
                    message = message.split(": ", 1)[-1]
            if target not in form.fields:
                target = None
            form.add_error(target, message)


@dashboard_view
def cancel_workload(request: DashboardRequest, namespace: str, name: str) -> HttpResponse:
    """GET: what cancelling does, and the button; POST: cancel it (the API's ``cancel``)."""
    viewer = request.viewer
    workload = (
        viewer.visible_to(Workload)
        .select_related("namespace", "local_queue")
        .filter(namespace__name=namespace, name=name)
        .first()
    )
    if workload is None:
        raise Http404("No such workload")
    if not viewer.can_edit(workload):
        raise PermissionDenied("Cancelling needs the editor role in the workload's namespace")
    form = CancelForm(request.POST if request.method == "POST" else None)
    refused = ""
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                ended = lifecycle.cancel_workload(workload.pk, message=form.cleaned_data["message"])
            except InvalidTransition as error:
                refused, status = str(error), 409
                workload.state = error.state
            except Workload.DoesNotExist:
                raise Http404("No such workload") from None
            else:
                was = "withdrawn before it was admitted" if workload.state == WorkloadState.PENDING else "stopped"
                messages.success(request, f"Cancelled {namespace}/{name}: {was}.")
                return redirect("queues:workload", ended.namespace.name, ended.name)
    context = {
        "workload": workload,
        "form": form,
        "refused": refused,
        "cancellable": workload.state in CANCELLABLE,
        "back": reverse("queues:workload", args=[namespace, name]),
        "viewer": viewer,
    }
    return render(request, "queues/actions/cancel.html", context, status=status)
