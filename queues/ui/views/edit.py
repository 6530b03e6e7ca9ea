"""Add and delete pages of the policy objects (cohorts, ClusterQueues, namespaces, LocalQueues,
resource flavors, clusters), and a flavor's edit page, NetBox-style: one generic form page
(``queues/edit/object_edit.html``, shared with the edit pages of ``policy.py``) and one
delete confirmation page (``queues/edit/object_delete.html``).

Admins only: another signed-in user gets a 403 for what it can see and a 404 for what it
cannot (cohorts, other tenants' namespaces and LocalQueues, ClusterQueues none of its queues
feed), as on the edit pages.

Writes go through the API's services with surface ``ui``: ``save_policy_object`` (validation by
the models' ``full_clean``, one audit row) and ``delete_policy_object`` (refused, with what still
depends on the object, while anything refers to it; admitted work first). A delete page carries
the version it was opened at: a delete over a newer change is refused (409) and shows the
object as it is now.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import models
from django.forms import ModelForm
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from core.access import Access
from core.models import Surface
from core.versions import StaleVersion, version_of
from queues.models import Cluster, ClusterQueue, Cohort, LocalQueue, Namespace, ResourceFlavor
from queues.selectors.dependents import Dependents, dependents_of
from queues.services.errors import StillUsed
from queues.services.policy import delete_policy_object
from queues.ui.forms import (
    ClusterAddForm,
    ClusterQueueAddForm,
    ClusterQueueQuotaFormSet,
    CohortAddForm,
    CohortQuotaFormSet,
    LocalQueueAddForm,
    NamespaceAddForm,
    NamespaceQuotaFormSet,
    ResourceFlavorAddForm,
    ResourceFlavorForm,
)
from queues.ui.views.common import DashboardRequest, dashboard_view
from queues.ui.views.policy import edit_page, opened_at, saving_version


@dataclass(frozen=True)
class Kind:
    """One kind of policy object as the add and delete pages handle it."""

    model: type[models.Model]
    label: str  # "ClusterQueue"
    add_form: type[ModelForm]
    formset: Any  # an inline quota formset class, or None
    detail: Callable[[Any], str]  # the object's page
    listing: Callable[[], str]  # where a deleted object's page sends you
    visible: Callable[[Access, Any], bool]  # a non-admin may see it (then: 403, else 404)


def _tree() -> str:
    return reverse("queues:queue-tree")


KINDS: dict[str, Kind] = {
    "cohort": Kind(
        Cohort,
        "cohort",
        CohortAddForm,
        CohortQuotaFormSet,
        lambda obj: reverse("queues:cohort", args=[obj.name]),
        _tree,
        lambda viewer, obj: False,  # cohort pages are for admins
    ),
    "cluster-queue": Kind(
        ClusterQueue,
        "ClusterQueue",
        ClusterQueueAddForm,
        ClusterQueueQuotaFormSet,
        lambda obj: reverse("queues:cluster-queue", args=[obj.name]),
        _tree,
        lambda viewer, obj: viewer.visible_to(LocalQueue).filter(cluster_queue=obj).exists(),
    ),
    "namespace": Kind(
        Namespace,
        "namespace",
        NamespaceAddForm,
        NamespaceQuotaFormSet,
        lambda obj: reverse("queues:namespace", args=[obj.name]),
        _tree,
        lambda viewer, obj: viewer.can_read_namespace(obj.pk),
    ),
    "local-queue": Kind(
        LocalQueue,
        "LocalQueue",
        LocalQueueAddForm,
        None,
        lambda obj: reverse("queues:local-queue", args=[obj.namespace.name, obj.name]),
        _tree,
        lambda viewer, obj: viewer.can_read_namespace(obj.namespace_id),
    ),
    "flavor": Kind(
        ResourceFlavor,
        "resource flavor",
        ResourceFlavorAddForm,
        None,
        lambda obj: reverse("queues:flavor", args=[obj.name]),
        lambda: reverse("queues:flavors"),
        lambda viewer, obj: viewer.is_authenticated,  # cluster-wide: every tenant reads flavors
    ),
    "cluster": Kind(
        Cluster,
        "cluster",
        ClusterAddForm,
        None,
        lambda obj: reverse("queues:cluster", args=[obj.name]),
        lambda: reverse("queues:clusters"),
        lambda viewer, obj: viewer.is_authenticated,  # names and health: every signed-in user
    ),
}


def _refuse(viewer: Access, kind: Kind, obj: Any) -> None:
    """403 for a non-admin who may see ``obj``, 404 otherwise; nothing for an admin."""
    if viewer.is_admin:
        return
    if obj is not None and kind.visible(viewer, obj):
        raise PermissionDenied(f"Only platform admins add, change or delete {kind.label}s")
    if obj is None and viewer.is_authenticated:
        raise PermissionDenied(f"Only platform admins add {kind.label}s")
    raise Http404(f"No such {kind.label}")


def _initial(request: DashboardRequest, kind: str) -> dict[str, Any]:
    """Prefill from the page the Add link was on (``?namespace=team-a``, ``?cluster_queue=gpu``, ``?cohort=org``)."""
    initial: dict[str, Any] = {}
    lookups: dict[str, tuple[Any, str]] = {
        "namespace": (Namespace, "namespace"),
        "cluster_queue": (ClusterQueue, "cluster_queue"),
        "cohort": (Cohort, "cohort" if kind == "cluster-queue" else "parent"),
    }
    for parameter, (model, field) in lookups.items():
        name = request.GET.get(parameter, "")[:63]
        if name:
            found = model._default_manager.filter(name=name).values_list("pk", flat=True).first()
            if found is not None:
                initial[field] = found
    return initial


@dashboard_view
def add_object(request: DashboardRequest, kind: str) -> HttpResponse:
    spec = KINDS[kind]
    _refuse(request.viewer, spec, None)
    obj = spec.model()
    form = spec.add_form(request.POST or None, instance=obj, initial=_initial(request, kind))
    formset = spec.formset(request.POST or None, instance=obj, prefix="quotas") if spec.formset else None
    return edit_page(request, obj, form, formset, label=spec.label, back=spec.listing(), done=spec.detail)


@dashboard_view
def edit_flavor(request: DashboardRequest, name: str) -> HttpResponse:
    flavor = get_object_or_404(ResourceFlavor, name=name)
    _refuse(request.viewer, KINDS["flavor"], flavor)
    form = ResourceFlavorForm(request.POST or None, instance=flavor, initial=opened_at(request, flavor, request.viewer))
    return edit_page(
        request,
        flavor,
        form,
        None,
        label=f"resource flavor {name}",
        back=reverse("queues:flavor", args=[name]),
        delete_url=reverse("queues:delete-flavor", args=[name]),
    )


def _object(kind: str, lookup: dict[str, str]) -> Any:
    spec = KINDS[kind]
    if kind == "local-queue":
        return get_object_or_404(
            LocalQueue.objects.select_related("namespace"), namespace__name=lookup["namespace"], name=lookup["name"]
        )
    return get_object_or_404(spec.model, name=lookup["name"])


@dashboard_view
def delete_object(request: DashboardRequest, kind: str, **lookup: str) -> HttpResponse:
    spec = KINDS[kind]
    obj = _object(kind, lookup)
    _refuse(request.viewer, spec, obj)
    return delete_page(
        request,
        obj,
        label=f"{spec.label} {obj}",
        back=spec.detail(obj),
        done=spec.listing(),
        delete=delete_policy_object,
    )


def delete_page(
    request: DashboardRequest,
    obj: models.Model,
    *,
    label: str,
    back: str,
    done: str,
    delete: Callable[..., None],
    lock_first: Callable[[], None] | None = None,
) -> HttpResponse:
    """The confirmation page (what depends on ``obj``, what goes with it) and, on POST, the delete
    through ``delete`` (a service: ``(obj, *, actor, surface)``), refused with the reason (409)
    when something still depends on it or the object changed since the page was opened."""
    problem = ""
    if request.method == "POST":
        try:
            with saving_version(request, obj, request.viewer, lock_first=lock_first):
                delete(obj, actor=request.user, surface=Surface.UI)
        except StaleVersion as stale:
            who = f"{stale.change.sentence()}. " if stale.change is not None else ""
            problem = (
                f"This {obj._meta.verbose_name} was changed after you opened this page. {who}Nothing was "
                "deleted: review it as it is now below, and delete again if you still mean to."
            )
            obj.refresh_from_db()
        except StillUsed as refused:
            problem = f"{label} was not deleted. {refused.message}"
        else:
            messages.success(request, f"Deleted {label}.")
            return redirect(done)
    dependents: Dependents = dependents_of(obj)
    context = {
        "obj": obj,
        "label": label,
        "back": back,
        "dependents": dependents,
        "version": version_of(obj, request.viewer),
        "problem": problem,
        "viewer": request.viewer,
    }
    return render(request, "queues/edit/object_delete.html", context, status=409 if problem else 200)
