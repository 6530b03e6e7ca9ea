"""Cluster pages: every cluster's capacity, admitted and pending work and health, one cluster's
page, and (admins) its edit page. Figures come from ``queues.selectors.clusters`` (the API's
too); add and delete go through ``queues.ui.views.edit`` like every policy object.

Every signed-in user reads the list and the pages (names and health are cluster-wide, as in the
API); a tenant's figures cover its own namespaces and the ClusterQueues they feed, and its
pages never show a connection or the last error. Only admins edit (others: 403).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse

from queues.models import Cluster
from queues.selectors.clusters import cluster_figures
from queues.ui.forms import ClusterForm, DefaultClusterForm
from queues.ui.views.common import DashboardRequest, dashboard_view
from queues.ui.views.policy import edit_page, opened_at


@dashboard_view
def cluster_list(request: DashboardRequest) -> HttpResponse:
    return render(
        request,
        "queues/clusters/list.html",
        {"clusters": cluster_figures(request.viewer), "viewer": request.viewer},
    )


def secret_hint(reference: str) -> str:
    """What the pages show of a token reference: its kind only (``env:…``, ``file:…``)."""
    if not reference:
        return ""
    kind, _, _rest = reference.partition(":")
    return f"{kind}:… (set)"


@dashboard_view
def cluster_detail(request: DashboardRequest, name: str) -> HttpResponse:
    found = cluster_figures(request.viewer, name=name[:63])
    if not found:
        raise Http404("No such cluster")
    figures = found[0]
    context = {"cluster": figures, "viewer": request.viewer}
    if request.viewer.is_admin:
        row = Cluster.objects.get(pk=figures.id)
        context.update(connection=row, secret=secret_hint(row.rest_secret))
    return render(request, "queues/clusters/detail.html", context)


@dashboard_view
def edit_cluster(request: DashboardRequest, name: str) -> HttpResponse:
    cluster = get_object_or_404(Cluster, name=name)
    if not request.viewer.is_admin:
        raise PermissionDenied("Only platform admins change clusters")
    form_class = DefaultClusterForm if cluster.from_settings else ClusterForm
    form = form_class(request.POST or None, instance=cluster, initial=opened_at(request, cluster, request.viewer))
    return edit_page(
        request,
        cluster,
        form,
        None,
        label=f"cluster {name}",
        back=reverse("queues:cluster", args=[name]),
        delete_url="" if cluster.from_settings else reverse("queues:delete-cluster", args=[name]),
    )
