"""Who is looking: the REST API's tenancy rules (``queues.tenancy``), used as they are.

Staff admins see everything; tenants the namespaces of their ``TenantMembership`` rows, as
viewers or editors. Editors change only ``EDITOR_LOCAL_QUEUE_FIELDS`` of their own LocalQueues
(stop policy, description): raising its own weight would let a tenant jump ahead of the others.
The dashboard is stricter than the API in one place: cohorts and ClusterQueues a tenant's
LocalQueues do not feed are not shown to it at all.
"""

from __future__ import annotations

from queues.tenancy import ANONYMOUS, EDITOR_LOCAL_QUEUE_FIELDS, Access, access_for, scope_to_namespaces

# The dashboard's names for the API's: the selectors take "the viewer" of a page.
Viewer = Access
viewer_for = access_for
scoped = scope_to_namespaces
ADMIN = Access(is_authenticated=True, is_admin=True)

__all__ = ["ADMIN", "ANONYMOUS", "EDITOR_LOCAL_QUEUE_FIELDS", "Viewer", "scoped", "viewer_for"]
