"""Who may do what in the playground.

* Admins (``is_staff`` or ``is_superuser``) see every scenario and run, start from the whole
  live cluster, and apply a run's edits.
* Tenants (members of namespaces) run what-ifs: presets, uploads, and the live cluster as
  they may see it (other namespaces renamed). They see their own scenarios and runs only, and
  can never apply.
* Other signed-in users have no business here (as in the REST API: no role, no access).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from queues import tenancy


@dataclass(frozen=True)
class PlaygroundAccess:
    user: Any
    is_admin: bool
    namespace_ids: tuple[int, ...]

    @property
    def can_use(self) -> bool:
        return self.is_admin or bool(self.namespace_ids)

    @property
    def can_apply(self) -> bool:
        return self.is_admin

    def can_see(self, owner_id: int) -> bool:
        return self.is_admin or owner_id == self.user.pk


def access_for(user: Any) -> PlaygroundAccess:
    """The roles come from ``queues.tenancy`` (one rule for the API, the pages and the playground)."""
    roles = tenancy.access_for(user)
    namespaces: tuple[int, ...] = () if roles.is_admin else tuple(roles.namespace_ids)
    return PlaygroundAccess(user=user, is_admin=roles.is_admin, namespace_ids=namespaces)
