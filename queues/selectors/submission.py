"""What the submit form of a LocalQueue is built from: the resources its ClusterQueue has quota
for (per flavor, with the borrowing limit and the namespace's hard quota), the priority classes
the viewer may name, and which LocalQueues a viewer may submit to.

Reads only; the rule of who may submit is the API's (``Access.can_edit_namespace``: editors of
the LocalQueue's namespace and admins), and a LocalQueue the viewer cannot see is never returned.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from core.access import Access
from core.formatting import format_for_humans
from queues.models import ClusterQueueQuota, LocalQueue, NamespaceQuota, StopPolicy, WorkloadPriorityClass
from queues.ui.display import is_bytes, resource_order


@dataclass(frozen=True)
class FlavorLimit:
    """One flavor's quota of a resource in the ClusterQueue (millis)."""

    flavor: str
    nominal: int
    borrowing_limit: int | None


@dataclass(frozen=True)
class ResourceLimit:
    """A resource the form asks for, and the limits that bound one workload's request of it."""

    resource: str
    flavors: list[FlavorLimit]
    namespace_hard: int | None
    borrows_from_cohort: bool  # the ClusterQueue is in a cohort: without a borrowing limit, it may borrow

    @property
    def unit(self) -> str:
        """How the amount is written: bytes with the Kubernetes suffixes, CPU in cores, the rest as counts."""
        if is_bytes(self.resource):
            return "bytes: 512Mi, 64Gi, 1Ti"
        if self.resource == "cpu":
            return "cores: 500m is half a core"
        return "count: whole devices, e.g. 1, 2"

    @property
    def largest(self) -> int | None:
        """The most of this resource one workload can ever be admitted with (millis), or None when
        it depends on what the cohort lends at the time (a flavor without a borrowing limit)."""
        bounds: list[int] = []
        for limit in self.flavors:
            if limit.borrowing_limit is None and self.borrows_from_cohort:
                bounds = []
                break
            bounds.append(limit.nominal + ((limit.borrowing_limit or 0) if self.borrows_from_cohort else 0))
        largest = max(bounds) if bounds else None
        if self.namespace_hard is not None:
            largest = self.namespace_hard if largest is None else min(largest, self.namespace_hard)
        return largest

    @property
    def largest_text(self) -> str:
        return self.text(self.largest)

    @property
    def hard_text(self) -> str:
        return self.text(self.namespace_hard)

    def text(self, millis: int | None) -> str:
        return format_for_humans(millis, self.resource)

    @property
    def flavor_lines(self) -> list[str]:
        """``a100: 8 (may borrow 4 more)`` per flavor, as the form shows them."""
        lines = []
        for limit in self.flavors:
            if not self.borrows_from_cohort:
                extra = ""
            elif limit.borrowing_limit is None:
                extra = " (may borrow what the cohort lends)"
            elif limit.borrowing_limit == 0:
                extra = " (borrows nothing)"
            else:
                extra = f" (may borrow {self.text(limit.borrowing_limit)} more)"
            lines.append(f"{limit.flavor}: {self.text(limit.nominal)}{extra}")
        return lines


@dataclass(frozen=True)
class PriorityChoice:
    name: str
    value: int


@dataclass(frozen=True)
class SubmitOptions:
    local_queue: LocalQueue
    resources: list[ResourceLimit]
    priority_classes: list[PriorityChoice]  # what the viewer may name
    default_class: PriorityChoice | None  # what a submission naming none gets
    stopped: bool


def visible_local_queue(viewer: Access, namespace: str, name: str) -> LocalQueue | None:
    """The LocalQueue ``namespace/name`` if the viewer can see it (None: absent, or another tenant's)."""
    return (
        viewer.visible_to(LocalQueue)
        .select_related("namespace", "namespace__default_priority_class", "cluster_queue")
        .filter(namespace__name=namespace, name=name)
        .first()
    )


def submittable_local_queues(viewer: Access) -> QuerySet[LocalQueue]:
    """The LocalQueues the viewer may submit to, by key: all for admins, their namespaces' for
    editors (a queryset: the page shows it a page at a time)."""
    queues = viewer.visible_to(LocalQueue).select_related("namespace", "cluster_queue")
    if not viewer.is_admin:
        editable = [ns for ns in viewer.namespace_ids if viewer.can_edit_namespace(ns)]
        queues = queues.filter(namespace_id__in=editable)
    return queues.order_by("namespace__name", "name")


def submit_options(viewer: Access, local_queue: LocalQueue) -> SubmitOptions:
    """The form's fields for ``local_queue`` (three queries)."""
    cluster_queue = local_queue.cluster_queue
    by_resource: dict[str, list[FlavorLimit]] = {}
    rows = (
        ClusterQueueQuota.objects.filter(cluster_queue=cluster_queue)
        .select_related("flavor")
        .order_by("flavor_order", "flavor__name", "resource")
    )
    for row in rows:
        by_resource.setdefault(row.resource, []).append(
            FlavorLimit(flavor=row.flavor.name, nominal=row.nominal, borrowing_limit=row.borrowing_limit)
        )
    hard = dict(NamespaceQuota.objects.filter(namespace_id=local_queue.namespace_id).values_list("resource", "hard"))
    resources = [
        ResourceLimit(
            resource=resource,
            flavors=by_resource[resource],
            namespace_hard=hard.get(resource),
            borrows_from_cohort=cluster_queue.cohort_id is not None,
        )
        for resource in resource_order(by_resource)
    ]
    namespace = local_queue.namespace
    classes = WorkloadPriorityClass.objects.order_by("-value", "name")
    if not viewer.is_admin:
        classes = classes.filter(name__in=namespace.priority_class_names())
    default = namespace.default_priority_class
    return SubmitOptions(
        local_queue=local_queue,
        resources=resources,
        priority_classes=[PriorityChoice(name=c.name, value=c.value) for c in classes],
        default_class=PriorityChoice(name=default.name, value=default.value) if default is not None else None,
        stopped=local_queue.stop_policy != StopPolicy.NONE,
    )
