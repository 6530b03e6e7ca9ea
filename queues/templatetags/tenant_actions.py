"""``{% can_submit as flag %}``: whether the signed-in user may submit to some LocalQueue (the
sidebar's "Submit" link). The rule is ``Access.can_edit_namespace``: admins, and editors of a
namespace; one query for a tenant, none for an admin."""

from __future__ import annotations

from typing import Any

from django import template

from core.models import TenantMembership

register = template.Library()


@register.simple_tag(takes_context=True)
def can_submit(context: dict[str, Any]) -> bool:
    user = getattr(context.get("request"), "user", None)
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    if user.is_staff or user.is_superuser:
        return True
    return TenantMembership.objects.filter(user=user, role=TenantMembership.Role.EDITOR).exists()
