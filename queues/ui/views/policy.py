"""Policy edit pages: weights, quotas, modes, stop policies and budgets, each save audited (surface ``ui``).

Who may edit: admins everything; tenant editors the stop policy and description of their own
LocalQueues. A page the viewer can see but not change answers 403; another tenant's object 404.

Concurrent edits: a form carries the version of the object it was opened at (``core.versions``).
A save locks the object's row, compares, validates and writes in one transaction; when someone
saved the object in between, the page comes back (409) with the user's input, an error naming
who changed what and when, and nothing written. The form it shows carries the current version,
so saving it again deliberately replaces the other change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.contrib import messages
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.db import IntegrityError, models, transaction
from django.forms import ModelForm
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from core.access import Access
from core.models import PolicyChange, Surface
from core.versions import StaleVersion, expecting_version, version_of
from queues.models import ClusterQueue, Cohort, LocalQueue, Namespace
from queues.services.errors import FieldErrors
from queues.services.policy import save_policy_object
from queues.ui.forms import (
    ClusterQueueForm,
    ClusterQueueQuotaFormSet,
    CohortForm,
    CohortQuotaFormSet,
    LocalQueueForm,
    LocalQueueTenantForm,
    NamespaceForm,
    NamespaceQuotaFormSet,
    QuotaFormSet,
)
from queues.ui.links import playground_url
from queues.ui.views.common import DashboardRequest, dashboard_view


def _summary(change: PolicyChange | None, label: str) -> str:
    if change is None:
        return f"{label}: nothing changed."
    if change.action == PolicyChange.Action.CREATE:
        return f"Created {label}."
    before, after = change.before or {}, change.after or {}
    parts = []
    for name in change.changed_fields():
        if name == "quotas":
            parts.append("quotas updated")
        else:
            parts.append(f"{name.replace('_', ' ')} {before.get(name) or '—'} → {after.get(name) or '—'}")
    return f"Saved {label}: {'; '.join(parts)}."


def _attach(form: ModelForm, formset: QuotaFormSet | None, kept: list[ModelForm], errors: FieldErrors) -> None:
    """The service's field errors land on the form's fields, quota rows' errors on their row."""
    for field, messages_ in errors.errors.items():
        if field == "quotas" and isinstance(messages_, dict) and formset is not None:
            for key, row_errors in messages_.items():
                row = _row_form(kept, key)
                row_errors = row_errors if isinstance(row_errors, dict) else {"hard": row_errors}
                for row_field, row_messages in row_errors.items():
                    target = row if row is not None and row_field in row.fields else form
                    target.add_error(row_field if target is row else None, row_messages)
        else:
            form.add_error(field if field in form.fields else None, messages_)


def _row_form(kept: list[ModelForm], key: str) -> ModelForm | None:
    """The form of a quota row named by position ("0") or, for a namespace, by resource."""
    if key.isdigit() and int(key) < len(kept):
        return kept[int(key)]
    return next((f for f in kept if getattr(f.instance, "resource", None) == key), None)


def _last_change_id(obj: models.Model) -> int:
    row = PolicyChange.objects.filter(object_type=obj._meta.model_name, object_id=str(obj.pk)).order_by("-id").first()
    return row.id if row else 0


def opened_at(request: HttpRequest, obj: models.Model, viewer: Access) -> dict[str, str] | None:
    """The initial data that puts the object's current version into the form shown by a GET
    (None for a POST: the form carries the version it was opened at)."""
    return None if request.method == "POST" else {"version": version_of(obj, viewer)}


@contextmanager
def saving_version(
    request: HttpRequest,
    obj: models.Model,
    viewer: Access,
    *,
    lock_first: Callable[[], None] | None = None,
) -> Iterator[None]:
    """The save's transaction: with the posted version, ``obj`` locked, reloaded and checked
    (``StaleVersion`` when it changed since the form was opened, 404 when it was deleted);
    without one (a form posted by a script that never read it), as before."""
    posted = request.POST.get("version", "")
    if not posted:
        with transaction.atomic():
            yield
        return
    try:
        with expecting_version(obj, posted, viewer, lock_first=lock_first):
            yield
    except ObjectDoesNotExist:
        raise Http404("deleted after this page was opened") from None


def stale_page_data(data: QueryDict, current: str, formset_prefix: str | None) -> QueryDict:
    """The user's input, carrying the ``current`` version; its quota rows all become new rows
    (the stored rows they named may be gone: a save replaces every quota row)."""
    data = data.copy()
    data["version"] = current
    if formset_prefix:
        total = data.get(f"{formset_prefix}-TOTAL_FORMS", "")
        data[f"{formset_prefix}-INITIAL_FORMS"] = "0"
        for index in range(min(int(total), 1000) if total.isdigit() else 0):  # Django's own cap
            data.pop(f"{formset_prefix}-{index}-id", None)
    return data


def stale_message(stale: StaleVersion) -> str:
    kind = stale.instance._meta.verbose_name
    who = f"{stale.change.sentence()}. " if stale.change is not None else ""
    return (
        f"This {kind} was changed after you opened this page. {who}Nothing was saved. Your input is "
        "below: save again to replace that change with it, or cancel to see the current version."
    )


CONCURRENT_WRITE = (
    "Someone saved a conflicting change (an object of the same name) while this page was being saved. "
    "Nothing was saved; your input is below."
)
SaveObject = Callable[..., Any]  # save_policy_object's signature: (instance, *, quotas, actor, surface)


def edit_page(
    request: DashboardRequest,
    obj: models.Model,
    form: ModelForm,
    formset: Any,  # a QuotaFormSet from inlineformset_factory (typed there as its base class), or None
    *,
    label: str,
    back: str,
    done: Callable[[Any], str] | None = None,
    save: SaveObject = save_policy_object,
    delete_url: str = "",
) -> HttpResponse:
    """The add or edit page of a policy object (``obj`` unsaved: add), NetBox-style: the form and
    its quota rows; a valid POST is saved by ``save`` (the API's own service) with surface ``ui``
    and redirects to ``done(obj)`` (default: ``back``). Field errors of the form or the service
    come back on their field (400); a save over a newer version is refused (409)."""
    creating = obj.pk is None
    conflict: list[str] = []
    if request.method == "POST":
        try:
            with saving_version(request, obj, request.viewer):
                if form.is_valid() and (formset is None or formset.is_valid()):
                    kept = formset.kept_forms() if formset is not None else []
                    before = 0 if creating else _last_change_id(obj)
                    try:
                        save(
                            form.instance,
                            quotas=[f.instance for f in kept] if formset is not None else None,
                            actor=request.user,
                            surface=Surface.UI,
                        )
                    except FieldErrors as errors:
                        _attach(form, formset, kept, errors)
                    except IntegrityError:  # validated, then a concurrent write won (the same name)
                        conflict = [CONCURRENT_WRITE]
                    else:
                        saved = form.instance
                        change = (
                            PolicyChange.objects.filter(
                                object_type=saved._meta.model_name, object_id=str(saved.pk), id__gt=before
                            )
                            .order_by("-id")
                            .first()
                        )
                        messages.success(request, _summary(change, label if not creating else f"{label} {saved}"))
                        return redirect(done(saved) if done is not None else back)
                    if creating:
                        form.instance.pk = None  # a failed save must not leave the page thinking it exists
                        form.instance._state.adding = True
        except StaleVersion as stale:
            data = stale_page_data(request.POST, stale.current, formset.prefix if formset is not None else None)
            form = type(form)(data, instance=obj)
            if formset is not None:
                formset = type(formset)(data, instance=obj, prefix=formset.prefix)
            conflict = [stale_message(stale)]
    status = (409 if conflict else 400) if request.method == "POST" else 200
    context: dict[str, Any] = {
        "obj": obj,
        "form": form,
        "formset": formset,
        "label": label,
        "creating": creating,
        "back": back,
        "delete_url": delete_url,
        "playground_url": playground_url(None if creating else obj),
        "viewer": request.viewer,
        "non_field_errors": conflict
        or list(form.non_field_errors()) + (list(formset.non_form_errors()) if formset else []),
    }
    return render(request, "queues/edit/object_edit.html", context, status=status)


@dashboard_view
def edit_local_queue(request: DashboardRequest, namespace: str, name: str) -> HttpResponse:
    lq = get_object_or_404(
        LocalQueue.objects.select_related("namespace", "cluster_queue"), namespace__name=namespace, name=name
    )
    viewer = request.viewer
    if not viewer.can_read_namespace(lq.namespace_id):
        raise Http404("No such LocalQueue")
    if viewer.is_admin:
        form_class: type[ModelForm] = LocalQueueForm
    elif viewer.can_edit_namespace(lq.namespace_id):
        form_class = LocalQueueTenantForm
    else:
        raise PermissionDenied("Viewers cannot change this LocalQueue")
    form = form_class(request.POST or None, instance=lq, initial=opened_at(request, lq, viewer))
    back = reverse("queues:local-queue", args=[namespace, name])
    return edit_page(
        request,
        lq,
        form,
        None,
        label=f"LocalQueue {lq.key}",
        back=back,
        delete_url=reverse("queues:delete-local-queue", args=[namespace, name]) if viewer.is_admin else "",
    )


@dashboard_view
def edit_namespace(request: DashboardRequest, name: str) -> HttpResponse:
    namespace = get_object_or_404(Namespace, name=name)
    if not request.viewer.can_read_namespace(namespace.id):
        raise Http404("No such namespace")
    if not request.viewer.is_admin:
        raise PermissionDenied("Only platform admins change namespace weights and quotas")
    form = NamespaceForm(
        request.POST or None, instance=namespace, initial=opened_at(request, namespace, request.viewer)
    )
    formset = NamespaceQuotaFormSet(request.POST or None, instance=namespace, prefix="quotas")
    return edit_page(
        request,
        namespace,
        form,
        formset,
        label=f"namespace {name}",
        back=reverse("queues:namespace", args=[name]),
        delete_url=reverse("queues:delete-namespace", args=[name]),
    )


@dashboard_view
def edit_cluster_queue(request: DashboardRequest, name: str) -> HttpResponse:
    queue = get_object_or_404(ClusterQueue, name=name)
    viewer = request.viewer
    if not viewer.is_admin:
        if not viewer.visible_to(LocalQueue).filter(cluster_queue=queue).exists():  # none of its LocalQueues feed it
            raise Http404("No such ClusterQueue")
        raise PermissionDenied("Only platform admins change ClusterQueues")
    form = ClusterQueueForm(request.POST or None, instance=queue, initial=opened_at(request, queue, viewer))
    formset = ClusterQueueQuotaFormSet(request.POST or None, instance=queue, prefix="quotas")
    return edit_page(
        request,
        queue,
        form,
        formset,
        label=f"ClusterQueue {name}",
        back=reverse("queues:cluster-queue", args=[name]),
        delete_url=reverse("queues:delete-cluster-queue", args=[name]),
    )


@dashboard_view
def edit_cohort(request: DashboardRequest, name: str) -> HttpResponse:
    if not request.viewer.is_admin:
        raise Http404("No such cohort")
    cohort = get_object_or_404(Cohort, name=name)
    form = CohortForm(request.POST or None, instance=cohort, initial=opened_at(request, cohort, request.viewer))
    formset = CohortQuotaFormSet(request.POST or None, instance=cohort, prefix="quotas")
    return edit_page(
        request,
        cohort,
        form,
        formset,
        label=f"cohort {name}",
        back=reverse("queues:cohort", args=[name]),
        delete_url=reverse("queues:delete-cohort", args=[name]),
    )
