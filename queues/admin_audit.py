"""Django admin saves of policy objects write PolicyChange rows, with inline quota rows included."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import models
from django.http import HttpRequest

from queues.audit import policy_state, record_change
from queues.models import PolicyChange, Surface


class AuditedAdmin(admin.ModelAdmin):
    """Takes the before-picture ahead of any write and records the after-picture last."""

    def save_model(self, request: HttpRequest, obj: models.Model, form: Any, change: bool) -> None:
        before = None
        if change and obj.pk is not None:
            stored = type(obj).objects.filter(pk=obj.pk).first()
            before = policy_state(stored)
        request._audit_before = before  # type: ignore[attr-defined]
        super().save_model(request, obj, form, change)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        obj = form.instance
        record_change(
            instance=obj,
            action=PolicyChange.Action.UPDATE if change else PolicyChange.Action.CREATE,
            before=getattr(request, "_audit_before", None),
            after=policy_state(type(obj).objects.get(pk=obj.pk)),
            actor=request.user,
            surface=Surface.ADMIN,
        )

    def delete_model(self, request: HttpRequest, obj: models.Model) -> None:
        before = policy_state(obj)
        pk = obj.pk
        super().delete_model(request, obj)
        obj.pk = pk
        record_change(
            instance=obj, action=PolicyChange.Action.DELETE, before=before, after=None,
            actor=request.user, surface=Surface.ADMIN,
        )

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for obj in queryset:
            self.delete_model(request, obj)
