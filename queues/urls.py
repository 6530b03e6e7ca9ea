"""Web UI routes of the fair-share domain, named ``queues:<name>``.

Objects are addressed by name, as in Kueue. Add pages sit under the singular kind
(``queues/cluster-queue/add/``), so no object name (a DNS label, "add" included) can shadow one;
edit and delete pages follow the object's page (``.../<name>/edit/``, ``.../<name>/delete/``).
"""

from django.urls import path

from queues.ui.views import actions, audit, clusters, detail, edit, flavors, glossary, overview, policy, tree, workloads

app_name = "queues"

urlpatterns = [
    path("", overview.overview, name="home"),
    path("queues/", tree.tree, name="queue-tree"),
    path("queues/flavors/", flavors.flavor_list, name="flavors"),
    path("queues/flavors/<str:name>/", flavors.flavor_detail, name="flavor"),
    path("queues/flavors/<str:name>/edit/", edit.edit_flavor, name="edit-flavor"),
    path("queues/flavors/<str:name>/delete/", edit.delete_object, {"kind": "flavor"}, name="delete-flavor"),
    path("clusters/", clusters.cluster_list, name="clusters"),
    path("clusters/<str:name>/", clusters.cluster_detail, name="cluster"),
    path("clusters/<str:name>/edit/", clusters.edit_cluster, name="edit-cluster"),
    path("clusters/<str:name>/delete/", edit.delete_object, {"kind": "cluster"}, name="delete-cluster"),
    path("queues/cohorts/<str:name>/", detail.cohort, name="cohort"),
    path("queues/cohorts/<str:name>/edit/", policy.edit_cohort, name="edit-cohort"),
    path("queues/cohorts/<str:name>/delete/", edit.delete_object, {"kind": "cohort"}, name="delete-cohort"),
    path("queues/cluster-queues/<str:name>/", detail.cluster_queue, name="cluster-queue"),
    path("queues/cluster-queues/<str:name>/edit/", policy.edit_cluster_queue, name="edit-cluster-queue"),
    path(
        "queues/cluster-queues/<str:name>/delete/",
        edit.delete_object,
        {"kind": "cluster-queue"},
        name="delete-cluster-queue",
    ),
    path("namespaces/<str:name>/", detail.namespace, name="namespace"),
    path("namespaces/<str:name>/edit/", policy.edit_namespace, name="edit-namespace"),
    path("namespaces/<str:name>/delete/", edit.delete_object, {"kind": "namespace"}, name="delete-namespace"),
    path("namespaces/<str:namespace>/queues/<str:name>/", detail.local_queue, name="local-queue"),
    path("namespaces/<str:namespace>/queues/<str:name>/edit/", policy.edit_local_queue, name="edit-local-queue"),
    path(
        "namespaces/<str:namespace>/queues/<str:name>/delete/",
        edit.delete_object,
        {"kind": "local-queue"},
        name="delete-local-queue",
    ),
    *(path(f"queues/{kind}/add/", edit.add_object, {"kind": kind}, name=f"add-{kind}") for kind in edit.KINDS),
    path("namespaces/<str:namespace>/workloads/<str:name>/", workloads.workload, name="workload"),
    path("workloads/", workloads.workload_list, name="workloads"),
    path("audit/", audit.audit_log, name="audit-log"),
    # tenants' actions (queues/ui/views/actions.py): the API's submit and cancel
    path("workloads/submit/", actions.choose_local_queue, name="submit-choose"),
    path("namespaces/<str:namespace>/queues/<str:name>/submit/", actions.submit_workload, name="submit-workload"),
    path("namespaces/<str:namespace>/workloads/<str:name>/cancel/", actions.cancel_workload, name="cancel-workload"),
    path("glossary/", glossary.glossary_page, name="glossary"),
]
