"""The kernel's models: the audit trail, tenant memberships and the control loop's heartbeat."""

from core.models.audit import PolicyChange, Surface
from core.models.health import Heartbeat
from core.models.tenancy import TenantMembership

__all__ = ["Heartbeat", "PolicyChange", "Surface", "TenantMembership"]
