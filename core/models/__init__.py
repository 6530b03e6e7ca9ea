"""The kernel's models: the audit trail, tenant memberships and the control loop's heartbeat."""

from core.models.audit import PolicyChange, Surface
from core.models.health import Heartbeat
from core.models.tenancy import DirectoryIdentity, TenantMembership

__all__ = ["DirectoryIdentity", "Heartbeat", "PolicyChange", "Surface", "TenantMembership"]
