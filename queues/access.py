"""Who sees which queues rows, and who may change what on a LocalQueue: the queues app's rules
for the kernel's ``core.access`` (loaded by ``QueuesConfig.ready()``)."""

from __future__ import annotations

from django.db.models import Q

from core.access import Access, everything, visibility
from queues.models import (
    ClusterQueue,
    Cohort,
    LocalQueue,
    Namespace,
    ResourceFlavor,
    StopLevel,
    UsageSample,
    Workload,
)

# What an editor may change on a LocalQueue of its own namespace. Not the weight: with one
# LocalQueue per namespace the score is usage / (namespace weight x LocalQueue weight), so a
# tenant raising its own LocalQueue weight would jump ahead of other tenants. Not the
# ClusterQueue or the name either: those are the admins' placement decisions.
EDITOR_LOCAL_QUEUE_FIELDS = frozenset({"description", "stop_policy"})


def _workloads(access: Access) -> Q:
    return Q() if access.is_executor else Q(namespace_id__in=access.namespace_ids)


def _usage_samples(access: Access) -> Q:
    """Series of the tenant's namespaces and LocalQueues, and of the cluster-wide ClusterQueues
    and cohorts (readable by every tenant, like the objects themselves)."""
    kind = UsageSample.Kind
    ids = access.namespace_ids
    local_queues = LocalQueue.objects.filter(namespace_id__in=ids).values("id")
    return (
        Q(kind__in=[kind.CLUSTER_QUEUE, kind.COHORT])
        | Q(kind=kind.NAMESPACE, object_id__in=ids)
        | Q(kind=kind.LOCAL_QUEUE, object_id__in=local_queues)
    )


visibility(Namespace, namespace="id", audited=True)
visibility(LocalQueue, namespace="namespace_id", audited=True)
visibility(Workload, namespace="namespace_id", rule=_workloads)
for _cluster_wide in (ResourceFlavor, Cohort, ClusterQueue):
    visibility(_cluster_wide, rule=everything)
visibility(UsageSample, rule=_usage_samples)


# -- stops on LocalQueues ----------------------------------------------------------------------------

_STOP_RANK = {StopLevel.EDITOR: 1, StopLevel.ADMIN: 2}


def stop_level(access: Access | None, namespace_id: int) -> StopLevel | None:
    """The level at which ``access`` acts on a stop of a LocalQueue in ``namespace_id``: admins (and
    the system itself, ``None``: commands, imports) at admin level, the namespace's editors at
    editor level, anyone else not at all."""
    if access is None or access.is_admin:
        return StopLevel.ADMIN
    if access.can_edit_namespace(namespace_id):
        return StopLevel.EDITOR
    return None


def may_change_stop(level: StopLevel | None, set_at: str) -> bool:
    """Whether a stop set at ``set_at`` may be lifted or changed at ``level``: the same level or a
    higher one. A stop whose level is unknown (set before levels were recorded) counts as an admin's."""
    held = _STOP_RANK.get(StopLevel(set_at) if set_at else StopLevel.ADMIN, 2)
    return level is not None and _STOP_RANK[level] >= held
