"""Who may see and edit which namespaces (tenants see only their own).

The namespace is named by its model label, never imported: the kernel sits below the apps."""

from django.conf import settings
from django.db import models


class TenantMembership(models.Model):
    class Role(models.TextChoices):
        VIEWER = "viewer", "Viewer"
        EDITOR = "editor", "Editor"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    namespace = models.ForeignKey("queues.Namespace", on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)

    class Meta:
        db_table = "queues_tenantmembership"  # the table it had in queues, kept: no data moves
        ordering = ["namespace__name", "user__username"]
        constraints = [
            models.UniqueConstraint(fields=["user", "namespace"], name="tenant_membership_unique"),
            models.CheckConstraint(condition=models.Q(role__in=["viewer", "editor"]), name="tenant_role_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.user} {self.role} of {self.namespace}"
