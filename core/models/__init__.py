"""The kernel's models: the audit trail and tenant memberships."""

from core.models.audit import PolicyChange, Surface
from core.models.tenancy import DirectoryIdentity, TenantMembership

__all__ = ["DirectoryIdentity", "PolicyChange", "Surface", "TenantMembership"]
