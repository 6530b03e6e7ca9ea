"""Who is looking: staff admins see everything, tenants the namespaces they are members of.

The same rules as the REST API (``TenantMembership`` viewer/editor per namespace). Editors may
change only the operational fields of their own LocalQueues (stop policy, description), not
weights or quotas: raising its own weight would let a tenant jump ahead of the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from django.db.models import QuerySet

from queues.models import TenantMembership

EDITOR_LOCAL_QUEUE_FIELDS = ("stop_policy", "description")


@dataclass(frozen=True)
class Viewer:
    """One request's roles, loaded once (one query for a tenant, none for an admin)."""

    user_id: int | None = None
    username: str = ""
    is_admin: bool = False
    roles: Mapping[int, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def is_authenticated(self) -> bool:
        return self.user_id is not None

    @property
    def is_tenant(self) -> bool:
        return not self.is_admin and bool(self.roles)

    @property
    def namespace_ids(self) -> list[int]:
        return sorted(self.roles)

    @property
    def scope_key(self) -> str:
        """Identifies what this viewer may see (cache keys of scoped aggregates)."""
        return "admin" if self.is_admin else "ns:" + ",".join(str(i) for i in self.namespace_ids)

    def can_read_namespace(self, namespace_id: int) -> bool:
        return self.is_admin or namespace_id in self.roles

    def can_edit_namespace(self, namespace_id: int) -> bool:
        return self.is_admin or self.roles.get(namespace_id) == TenantMembership.Role.EDITOR

    def can_edit_any(self) -> bool:
        return self.is_admin or TenantMembership.Role.EDITOR in self.roles.values()


ANONYMOUS = Viewer()


def viewer_for(user: object) -> Viewer:
    """The roles of ``user``; anonymous and inactive users have none."""
    if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
        return ANONYMOUS
    is_admin = bool(getattr(user, "is_staff", False) or getattr(user, "is_superuser", False))
    roles: dict[int, str] = {}
    if not is_admin:
        roles = dict(TenantMembership.objects.filter(user_id=user.pk).values_list("namespace_id", "role"))  # type: ignore[attr-defined]
    return Viewer(
        user_id=user.pk,  # type: ignore[attr-defined]
        username=getattr(user, "username", ""),
        is_admin=is_admin,
        roles=MappingProxyType(roles),
    )


def scoped(queryset: QuerySet, viewer: Viewer, namespace_path: str) -> QuerySet:
    """Only rows of the viewer's namespaces (all rows for admins, none for strangers).

    ``namespace_path`` leads from the queryset's model to the namespace id: ``"namespace_id"``,
    ``"local_queue__namespace_id"``, or ``"id"`` for namespaces themselves.
    """
    if viewer.is_admin:
        return queryset
    return queryset.filter(**{f"{namespace_path}__in": viewer.namespace_ids})
