"""Who may see and change what: ONE rule for the REST API, the web pages, budgets and the playground.

- **Staff admins** (``is_staff`` or ``is_superuser``) see and change everything.
- **Tenant members** are linked to namespaces through ``TenantMembership``. Only their own
  namespaces exist for them: namespaces, LocalQueues, workloads, budgets and audit rows of other
  namespaces are filtered out of every list, and fetching one is a 404, never a 403.
  *Viewers* read. *Editors* additionally submit and cancel workloads in their namespaces and may
  change the fields in ``queues.access.EDITOR_LOCAL_QUEUE_FIELDS`` of their LocalQueues. Cluster-wide policy
  (flavors, cohorts, ClusterQueues) is readable by every tenant and writable by admins only.
  In the playground they run what-ifs and see their own scenarios and runs; admins apply.
- **Executors** are service accounts in the Django group ``executors``: they read workloads (all
  namespaces: they run whatever is admitted) and report ``start``, ``finish`` and ``fail``.

A user may hold several of these roles; the permissions add up.

``Access`` holds one user's roles (loaded once per request). ``access.visible_to(model or
queryset)`` is the only place rows are scoped to a viewer: each model's rule is declared once with
``visibility()`` by the app that owns it (each app's AppConfig.ready() loads its rules), in the
manner of NetBox's ``RestrictedQuerySet.restrict``. A model without a declared rule is an error,
never silently visible. What stays hidden inside visible objects is ``core.redaction``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import reduce
from types import MappingProxyType
from typing import Any

from django.db import models
from django.db.models import CharField, Q, QuerySet
from django.db.models.functions import Cast

from core.models import PolicyChange, TenantMembership

EXECUTORS_GROUP = "executors"


@dataclass(frozen=True)
class Access:
    """One user's roles, loaded once per request (two queries)."""

    is_authenticated: bool = False
    is_admin: bool = False
    is_executor: bool = False
    roles: Mapping[int, str] = field(default_factory=lambda: MappingProxyType({}))
    user_id: int | None = None

    @property
    def is_tenant(self) -> bool:
        return bool(self.roles)

    @property
    def namespace_ids(self) -> list[int]:
        """Namespaces the user is a member of (any role)."""
        return sorted(self.roles)

    def can_read_namespace(self, namespace_id: int | None) -> bool:
        return self.is_admin or namespace_id in self.roles

    def can_edit_namespace(self, namespace_id: int | None) -> bool:
        """Editors act on their namespace's workloads and LocalQueues; admins on all."""
        if self.is_admin:
            return True
        return namespace_id is not None and self.roles.get(namespace_id) == TenantMembership.Role.EDITOR

    def can_edit(self, obj: models.Model) -> bool:
        """Whether the user may change ``obj``: admins anything, editors what belongs to their namespaces."""
        if self.is_admin:
            return True
        rule = _rule_of(type(obj))
        return rule.namespace_of is not None and self.can_edit_namespace(rule.namespace_of(obj))

    @property
    def can_use_playground(self) -> bool:
        """Admins and tenants run what-ifs; a user with no role has no business there."""
        return self.is_admin or self.is_tenant

    @property
    def can_apply_runs(self) -> bool:
        """Only admins turn a playground run's edits into policy."""
        return self.is_admin

    def visible_to(self, rows: type[models.Model] | QuerySet) -> QuerySet:
        """``rows`` (a model or a queryset) narrowed to what this user may see: all for admins,
        nothing for anonymous users, the model's declared rule for everyone else."""
        queryset = rows if isinstance(rows, QuerySet) else rows._default_manager.all()
        if self.is_admin:
            return queryset
        if not self.is_authenticated:
            return queryset.none()
        return queryset.filter(_rule_of(queryset.model).rule(self))


ANONYMOUS = Access()
ADMIN = Access(is_authenticated=True, is_admin=True)


def access_for(user: Any) -> Access:
    """The roles of ``user``; an inactive or anonymous user has none."""
    if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
        return ANONYMOUS
    is_admin = bool(user.is_staff or user.is_superuser)
    roles = dict(TenantMembership.objects.filter(user=user).values_list("namespace_id", "role"))
    is_executor = user.groups.filter(name=EXECUTORS_GROUP).exists()
    return Access(
        is_authenticated=True,
        is_admin=is_admin,
        is_executor=is_executor,
        roles=MappingProxyType(roles),
        user_id=user.pk,
    )


# -- the rules, one per model ----------------------------------------------------------------------

Rule = Callable[[Access], Q]


@dataclass(frozen=True)
class Visibility:
    """Which rows of one model a signed-in non-admin sees (``rule``), which namespace an object
    belongs to (``namespace_of``, for ``can_edit``), and whether tenants read the audit rows of
    the objects they see (``audited``)."""

    rule: Rule
    namespace_of: Callable[[Any], int | None] | None = None
    audited: bool = False


_RULES: dict[str, Visibility] = {}


def visibility(
    model: type[models.Model], *, namespace: str | None = None, rule: Rule | None = None, audited: bool = False
) -> None:
    """Declare ``model``'s rule: either ``namespace``, the lookup from the model to its namespace
    id (``"namespace_id"``, ``"local_queue__namespace_id"``, ``"id"`` for namespaces), or a
    ``rule`` building the filter from the viewer's ``Access``."""
    namespace_of = None
    if namespace is not None:
        path = namespace.split("__")
        namespace_of = lambda obj: reduce(lambda value, name: getattr(value, name, None), path, obj)  # noqa: E731
        if rule is None:
            rule = in_namespaces(namespace)
    if rule is None:
        raise ValueError(f"{model.__name__}: give a namespace lookup or a rule")
    _RULES[model._meta.label_lower] = Visibility(rule=rule, namespace_of=namespace_of, audited=audited)


def in_namespaces(lookup: str) -> Rule:
    """The rule "rows of the viewer's namespaces", through ``lookup``."""
    return lambda access: Q(**{f"{lookup}__in": access.namespace_ids})


def _rule_of(model: type[models.Model]) -> Visibility:
    try:
        return _RULES[model._meta.label_lower]
    except KeyError:
        raise LookupError(f"no visibility rule is declared for {model._meta.label}") from None


def everything(access: Access) -> Q:
    """The rule "every row" (cluster-wide objects every tenant reads)."""
    return Q()


def _policy_changes(access: Access) -> Q:
    """Audit rows about the objects of the audited kinds (namespaces, LocalQueues, budgets) the
    viewer can see."""
    from django.apps import apps

    conditions = []
    for label, declared in _RULES.items():
        if not declared.audited:
            continue
        model = apps.get_model(label)
        visible = model._default_manager.filter(declared.rule(access))
        ids = visible.annotate(text_id=Cast("id", CharField())).values("text_id")
        conditions.append(Q(object_type=model._meta.model_name, object_id__in=ids))
    return reduce(operator.or_, conditions, Q(pk__in=[]))


def owned(access: Access) -> Q:
    """Rows the viewer created (the playground's scenarios and runs)."""
    return Q(owner_id=access.user_id)


# The audit trail's rule; each app declares its models' rules next to them (queues in
# queues/access.py, budgets and the playground in their models), loaded by its AppConfig.ready().
visibility(PolicyChange, rule=_policy_changes)
