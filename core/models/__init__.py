"""The kernel's models: the audit trail, tenant memberships, the control loop's heartbeat and
signed webhooks (endpoints and deliveries)."""

from core.models.audit import PolicyChange, Surface
from core.models.health import Heartbeat
from core.models.tenancy import DirectoryIdentity, TenantMembership
from core.models.webhooks import WebhookDelivery, WebhookEndpoint

__all__ = [
    "DirectoryIdentity",
    "Heartbeat",
    "PolicyChange",
    "Surface",
    "TenantMembership",
    "WebhookDelivery",
    "WebhookEndpoint",
]
