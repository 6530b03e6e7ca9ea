"""Web UI routes of the fair-share domain, named ``queues:<name>``."""

from django.urls import path

from queues.ui.views import audit, detail, flavors, glossary, overview, policy, tree, workloads

app_name = "queues"

urlpatterns = [
    path("", overview.overview, name="home"),
    path("queues/", tree.tree, name="queue-tree"),
    path("queues/flavors/", flavors.flavor_list, name="flavors"),
    path("queues/flavors/<str:name>/", flavors.flavor_detail, name="flavor"),
    path("queues/cohorts/<str:name>/", detail.cohort, name="cohort"),
    path("queues/cohorts/<str:name>/edit/", policy.edit_cohort, name="edit-cohort"),
    path("queues/cluster-queues/<str:name>/", detail.cluster_queue, name="cluster-queue"),
    path("queues/cluster-queues/<str:name>/edit/", policy.edit_cluster_queue, name="edit-cluster-queue"),
    path("namespaces/<str:name>/", detail.namespace, name="namespace"),
    path("namespaces/<str:name>/edit/", policy.edit_namespace, name="edit-namespace"),
    path("namespaces/<str:namespace>/queues/<str:name>/", detail.local_queue, name="local-queue"),
    path("namespaces/<str:namespace>/queues/<str:name>/edit/", policy.edit_local_queue, name="edit-local-queue"),
    path("namespaces/<str:namespace>/workloads/<str:name>/", workloads.workload, name="workload"),
    path("workloads/", workloads.workload_list, name="workloads"),
    path("audit/", audit.audit_log, name="audit-log"),
    path("glossary/", glossary.glossary_page, name="glossary"),
]
