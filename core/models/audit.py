"""PolicyChange: one audit row per change of weights, quotas, modes and budgets."""

from django.conf import settings
from django.db import models


class Surface(models.TextChoices):
    ADMIN = "admin", "Django admin"
    UI = "ui", "Web UI"
    API = "api", "REST API"
    CLI = "cli", "Command line"
    PLAYGROUND = "playground", "Playground"
    SYSTEM = "system", "Control loop"


class PolicyChange(models.Model):
    class Action(models.TextChoices):
        CREATE = "create", "Created"
        UPDATE = "update", "Updated"
        DELETE = "delete", "Deleted"

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    actor_name = models.CharField(max_length=150, blank=True, help_text="Kept when the user is deleted")
    surface = models.CharField(max_length=20, choices=Surface.choices)
    action = models.CharField(max_length=10, choices=Action.choices)
    object_type = models.CharField(max_length=60, db_index=True)
    object_id = models.CharField(max_length=64, blank=True)
    object_repr = models.CharField(max_length=200)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    note = models.TextField(blank=True)

    class Meta:
        db_table = "queues_policychange"  # the table it had in queues, kept: no data moves
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["object_type", "object_id"], name="policy_change_object")]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor_name or 'system'} {self.action} {self.object_type} {self.object_repr}"

    def changed_fields(self) -> list[str]:
        return self.fields_changed(self.before, self.after)

    @staticmethod
    def fields_changed(before: dict | None, after: dict | None) -> list[str]:
        """Names whose value differs between two pictures (``None`` is an empty picture)."""
        before, after = before or {}, after or {}
        return sorted(key for key in set(before) | set(after) if before.get(key) != after.get(key))
