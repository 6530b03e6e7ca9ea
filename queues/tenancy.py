"""Who may see and change what: staff admins, tenant members and executor service accounts.

The rules, shared by the API and (later) the web UI:

- **Staff admins** (``is_staff`` or ``is_superuser``) see and change everything.
- **Tenant members** are linked to namespaces through ``TenantMembership``. Only their own
  namespaces exist for them: namespaces, LocalQueues, workloads, budgets and audit rows of other
  namespaces are filtered out of every list, and fetching one is a 404, never a 403.
  *Viewers* read. *Editors* additionally submit and cancel workloads in their namespaces and may
  change the fields in ``EDITOR_LOCAL_QUEUE_FIELDS`` of their LocalQueues. Cluster-wide policy
  (flavors, cohorts, ClusterQueues) is readable by every tenant and writable by admins only.
- **Executors** are service accounts in the Django group ``executors``: they read workloads (all
  namespaces: they run whatever is admitted) and report ``start``, ``finish`` and ``fail``.

A user may hold several of these roles; the permissions add up.

Inside what a tenant may see, two things stay hidden (``redact_policy_state`` and
``reason_redactor``, each the one rule every surface calls): staff-only fields of an object
(where a budget's alerts go) and the names of other tenants' queues and workloads in the
reasons the control loop writes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from django.db.models import CharField, Q, QuerySet
from django.db.models.functions import Cast

from queues.models import LocalQueue, Namespace, StopLevel, TenantMembership, UsageSample

EXECUTORS_GROUP = "executors"

# What an editor may change on a LocalQueue of its own namespace. Not the weight: with one
# LocalQueue per namespace the score is usage / (namespace weight x LocalQueue weight), so a
# tenant raising its own LocalQueue weight would jump ahead of other tenants. Not the
# ClusterQueue or the name either: those are the admins' placement decisions.
EDITOR_LOCAL_QUEUE_FIELDS = frozenset({"description", "stop_policy"})

# Fields only admins read, by object type (the model name, as PolicyChange.object_type has it):
# where a budget's alerts go may carry secrets (a webhook URL with a token) and people's addresses.
STAFF_ONLY_FIELDS: Mapping[str, frozenset[str]] = MappingProxyType(
    {"budget": frozenset({"alert_emails", "webhook_url"})}
)


@dataclass(frozen=True)
class Access:
    """One user's roles, loaded once per request (two queries)."""

    is_authenticated: bool = False
    is_admin: bool = False
    is_executor: bool = False
    roles: Mapping[int, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def is_tenant(self) -> bool:
        return bool(self.roles)

    @property
    def namespace_ids(self) -> list[int]:
        """Namespaces the user is a member of (any role)."""
        return sorted(self.roles)

    def can_read_namespace(self, namespace_id: int) -> bool:
        return self.is_admin or namespace_id in self.roles

    def can_edit_namespace(self, namespace_id: int) -> bool:
        """Editors act on their namespace's workloads and LocalQueues; admins on all."""
        return self.is_admin or self.roles.get(namespace_id) == TenantMembership.Role.EDITOR


ANONYMOUS = Access()


def access_for(user: object) -> Access:
    """The roles of ``user``; an inactive or anonymous user has none."""
    if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
        return ANONYMOUS
    is_admin = bool(user.is_staff or user.is_superuser)  # type: ignore[attr-defined]
    roles = dict(TenantMembership.objects.filter(user=user).values_list("namespace_id", "role"))
    is_executor = user.groups.filter(name=EXECUTORS_GROUP).exists()  # type: ignore[attr-defined]
    return Access(is_authenticated=True, is_admin=is_admin, is_executor=is_executor, roles=MappingProxyType(roles))


def scope_to_namespaces(queryset: QuerySet, access: Access, namespace_path: str) -> QuerySet:
    """Only the rows of the user's namespaces (all of them for admins).

    ``namespace_path`` is the lookup from the queryset's model to the namespace id, e.g.
    ``"namespace_id"``, ``"local_queue__namespace_id"`` or ``"id"`` for namespaces themselves.
    """
    if access.is_admin:
        return queryset
    return queryset.filter(**{f"{namespace_path}__in": access.namespace_ids})


def budget_visibility(access: Access) -> Q:
    """Budgets that can hold a tenant's work: on its namespaces, its LocalQueues, or the
    ClusterQueues its LocalQueues feed (a ClusterQueue budget holds every tenant in it)."""
    ids = access.namespace_ids
    feeding = LocalQueue.objects.filter(namespace_id__in=ids).values("cluster_queue_id")
    return Q(namespace_id__in=ids) | Q(local_queue__namespace_id__in=ids) | Q(cluster_queue_id__in=feeding)


def usage_sample_visibility(access: Access) -> Q:
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


def policy_change_visibility(access: Access) -> Q:
    """Audit rows about the namespaces, LocalQueues and budgets a tenant can see."""
    from budgets.models import Budget  # budgets depends on queues; import late to keep it one-way

    ids = access.namespace_ids

    def as_text(queryset: QuerySet) -> QuerySet:
        return queryset.annotate(text_id=Cast("id", CharField())).values("text_id")

    local_queues = LocalQueue.objects.filter(namespace_id__in=ids)
    budgets = Budget.objects.filter(budget_visibility(access))
    return (
        Q(object_type="namespace", object_id__in=[str(i) for i in ids])
        | Q(object_type="localqueue", object_id__in=as_text(local_queues))
        | Q(object_type="budget", object_id__in=as_text(budgets))
    )


def redact_policy_state(access: Access, object_type: str, state: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``state`` (an object's fields, or an audit row's before/after picture) without the fields
    of ``STAFF_ONLY_FIELDS`` unless the viewer is an admin. The API's budget answers, the API's
    audit trail and the audit log page all read through this."""
    if state is None:
        return None
    hidden = () if access.is_admin else STAFF_ONLY_FIELDS.get(object_type, frozenset())
    return {name: value for name, value in state.items() if name not in hidden}


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

# -- other tenants' names in reasons ---------------------------------------------------------------

OTHER_TENANT_QUEUE = "another tenant's queue"
OTHER_TENANT_WORKLOAD = "another tenant's workload"
OTHER_TENANT_NAMESPACE = "another tenant's namespace"

_LABEL = r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?"
_OBJECT_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,251}[A-Za-z0-9])?"
# What the control loop's sentences name (queues/engine/reasons.py): "LocalQueue ns/name",
# a workload "ns/name" (preempted by, StrictFIFO head) and "namespace ns". A dotted resource
# name such as nvidia.com/gpu never matches: a namespace is a DNS label, without dots.
_REFERENCE = re.compile(
    rf"(?<![\w./-])(?:(?P<queue>LocalQueue )?(?P<namespace>{_LABEL})/{_OBJECT_NAME}"
    rf"|(?P<word>[Nn]amespace )(?P<bare>{_LABEL}))(?![\w/-])"
)


def redact_names(text: str, hidden: Container[str]) -> str:
    """``text`` with every queue, workload and namespace of the ``hidden`` namespaces replaced by
    "another tenant's ..." (pure: the rule's core, tested without a database)."""

    def replace(match: re.Match[str]) -> str:
        if match.group("bare") is not None:
            return OTHER_TENANT_NAMESPACE if match.group("bare") in hidden else match.group(0)
        if match.group("namespace") not in hidden:
            return match.group(0)
        return OTHER_TENANT_QUEUE if match.group("queue") else OTHER_TENANT_WORKLOAD

    return _REFERENCE.sub(replace, text)


def reason_redactor(access: Access) -> Callable[[str], str]:
    """A function that keeps other tenants' names out of the control loop's sentences (pending
    reasons, eviction reasons, admission end messages) for this viewer.

    The reasons are written once for everyone ("preempted by team-robotics/train-021"); a tenant
    reading its own workload learns that another tenant's workload or queue was involved, not
    which. Admins and executors (who read every workload) see the sentence as written. The
    namespaces the viewer may not read are loaded on the first sentence that names any (one
    query per request at most, none when no sentence names another namespace).
    """
    if access.is_admin or access.is_executor:
        return lambda text: text or ""
    hidden: set[str] | None = None

    def redact(text: str) -> str:
        nonlocal hidden
        if not text or not _REFERENCE.search(text):
            return text or ""
        if hidden is None:
            hidden = set(Namespace.objects.exclude(id__in=access.namespace_ids).values_list("name", flat=True))
        return redact_names(text, hidden)

    return redact

