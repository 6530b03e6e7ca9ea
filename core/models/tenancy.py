"""Who may see and edit which namespaces (tenants see only their own).

The namespace is named by its model label, never imported: the kernel sits below the apps.
A membership is either granted by hand (``source="local"``, the admin) or managed by the site's
directory (``source="directory"``, rewritten at each LDAP/OIDC sign-in by ``core.directory``)."""

from django.conf import settings
from django.db import models


class TenantMembership(models.Model):
    class Role(models.TextChoices):
        VIEWER = "viewer", "Viewer"
        EDITOR = "editor", "Editor"

    class Source(models.TextChoices):
        LOCAL = "local", "Granted by hand"
        DIRECTORY = "directory", "Directory groups"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    namespace = models.ForeignKey("queues.Namespace", on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)
    source = models.CharField(
        max_length=10,
        choices=Source.choices,
        default=Source.LOCAL,
        help_text="Directory rows are replaced at each directory sign-in; local rows are never touched by it",
    )

    class Meta:
        db_table = "queues_tenantmembership"  # the table it had in queues, kept: no data moves
        ordering = ["namespace__name", "user__username"]
        constraints = [
            models.UniqueConstraint(fields=["user", "namespace"], name="tenant_membership_unique"),
            models.CheckConstraint(condition=models.Q(role__in=["viewer", "editor"]), name="tenant_role_valid"),
            models.CheckConstraint(condition=models.Q(source__in=["local", "directory"]), name="tenant_source_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.user} {self.role} of {self.namespace}"


class DirectoryIdentity(models.Model):
    """What the site's directory said about a user at their last directory sign-in: the groups,
    and whether the directory (not an admin) made them staff or an executor, so that losing the
    group takes back only what the directory gave."""

    class Source(models.TextChoices):
        LDAP = "ldap", "LDAP"
        OIDC = "oidc", "OpenID Connect"

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="directory_identity")
    source = models.CharField(max_length=10, choices=Source.choices)
    groups = models.JSONField(default=list, blank=True)
    granted_staff = models.BooleanField(default=False)
    granted_executor = models.BooleanField(default=False)
    synced_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "directory identities"

    def __str__(self) -> str:
        return f"{self.user} ({self.get_source_display()})"
