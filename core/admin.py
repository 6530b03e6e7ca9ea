"""Django admin of the kernel's models: tenant memberships, directory identities and the (read-only) audit trail."""

from __future__ import annotations

from django.contrib import admin

from core.admin_base import ReadOnlyAdmin
from core.models import DirectoryIdentity, PolicyChange, TenantMembership


@admin.register(TenantMembership)
class TenantMembershipAdmin(admin.ModelAdmin):
    list_display = ("user", "namespace", "role", "source")
    list_filter = ("role", "source", "namespace")
    search_fields = ("user__username", "namespace__name")
    list_select_related = ("user", "namespace")


@admin.register(DirectoryIdentity)
class DirectoryIdentityAdmin(ReadOnlyAdmin):
    """What the directory said at each user's last sign-in (written by core.directory only)."""

    list_display = ("user", "source", "synced_at", "granted_staff", "granted_executor")
    list_filter = ("source", "granted_staff", "granted_executor")
    search_fields = ("user__username",)
    readonly_fields = [f.name for f in DirectoryIdentity._meta.fields]


@admin.register(PolicyChange)
class PolicyChangeAdmin(ReadOnlyAdmin):
    list_display = ("at", "actor_name", "surface", "action", "object_type", "object_repr", "changed")
    list_filter = ("surface", "action", "object_type")
    search_fields = ("object_repr", "actor_name", "note")
    date_hierarchy = "at"
    readonly_fields = [f.name for f in PolicyChange._meta.fields]

    @admin.display(description="Changed fields")
    def changed(self, obj: PolicyChange) -> str:
        return ", ".join(obj.changed_fields())
