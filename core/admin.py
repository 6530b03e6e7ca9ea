"""Django admin of the kernel's models: tenant memberships, directory identities, the (read-only)
audit trail, and signed webhooks (endpoints, audited; deliveries, read-only with a redeliver action)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest
from django.template.response import TemplateResponse

from core import webhooks, webhooks_services
from core.admin_base import ReadOnlyAdmin
from core.audit import AuditedAdmin
from core.models import DirectoryIdentity, PolicyChange, Surface, TenantMembership, WebhookDelivery, WebhookEndpoint


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


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(AuditedAdmin):
    """Admins' endpoints (audited writes). The secret is shown once, on the page after adding
    and after a rotation, never in a form or a list. A budget's own endpoint follows its budget's
    webhook_url: only its secret is managed here."""

    list_display = ("name", "scope", "url", "enabled", "rotating", "previous_secret_expires_at", "secret_rotated_at")
    list_filter = ("scope", "enabled")
    search_fields = ("name", "url")
    fields = ("name", "url", "events", "enabled", "scope", "previous_secret_expires_at", "secret_rotated_at")
    readonly_fields = ("scope", "previous_secret_expires_at", "secret_rotated_at")
    actions = ("rotate_secret", "end_rotation")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is not None and obj.scope == WebhookEndpoint.Scope.BUDGET:
            return self.fields
        return self.readonly_fields

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.scope == WebhookEndpoint.Scope.BUDGET:
            return False
        return super().has_delete_permission(request, obj)

    @admin.display(boolean=True, description="Rotating")
    def rotating(self, obj: WebhookEndpoint) -> bool:
        return obj.rotating

    def save_model(self, request: HttpRequest, obj: WebhookEndpoint, form: Any, change: bool) -> None:  # type: ignore[override]  # this admin is handed endpoints only
        if not change:
            obj.secret = webhooks.new_secret()
            request._webhook_secret = obj.secret  # type: ignore[attr-defined]  # shown by response_add, kept nowhere
        super().save_model(request, obj, form, change)

    def response_add(self, request: HttpRequest, obj: WebhookEndpoint, post_url_continue: str | None = None) -> Any:
        secret = getattr(request, "_webhook_secret", None)
        if secret is None:
            return super().response_add(request, obj, post_url_continue)
        return self._secret_page(request, obj, secret, "created")

    def _secret_page(self, request: HttpRequest, endpoint: WebhookEndpoint, secret: str, what: str) -> TemplateResponse:
        context = {
            **self.admin_site.each_context(request),
            "title": f"Webhook secret of {endpoint.name}",
            "endpoint": endpoint,
            "secret": secret,
            "what": what,
            "opts": self.model._meta,
        }
        response = TemplateResponse(request, "admin/core/webhookendpoint/secret.html", context)
        response["Cache-Control"] = "no-store"
        return response

    @admin.action(description="Rotate the secret (the old one signs too for one more day)")
    def rotate_secret(self, request: HttpRequest, queryset: Any) -> Any:
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one endpoint to rotate its secret.", messages.WARNING)
            return None
        endpoint = queryset.get()
        secret = webhooks_services.rotate(endpoint, actor=request.user, surface=Surface.ADMIN)
        return self._secret_page(request, endpoint, secret, "rotated")

    @admin.action(description="End the rotation (only the new secret signs)")
    def end_rotation(self, request: HttpRequest, queryset: Any) -> None:
        for endpoint in queryset:
            webhooks_services.end_rotation(endpoint, actor=request.user, surface=Surface.ADMIN)
        self.message_user(request, "Only the active secret signs now.", messages.SUCCESS)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    """Every message to every endpoint and how its delivery went; "Redeliver" sends again."""

    list_display = (
        "created_at",
        "endpoint",
        "event_type",
        "message_id",
        "status",
        "attempts",
        "next_attempt_at",
        "last_status_code",
        "last_error",
    )
    list_filter = ("status", "event_type", "endpoint")
    search_fields = ("message_id", "endpoint__name")
    list_select_related = ("endpoint",)
    date_hierarchy = "created_at"
    readonly_fields = [f.name for f in WebhookDelivery._meta.fields]
    actions = ("redeliver",)

    @admin.action(description="Redeliver (the same webhook-id and body, signed afresh)")
    def redeliver(self, request: HttpRequest, queryset: Any) -> None:
        count = webhooks.redeliver(queryset)
        self.message_user(request, f"{count} deliveries queued again.", messages.SUCCESS)
