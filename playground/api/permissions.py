"""Who may call the playground API (``playground.access`` states the rules).

Admins everything. Tenants (namespace members) create and read their own scenarios and runs;
another user's is a 404 (the queryset hides it), and ``apply`` on their own run is a 403.
Signed-in users with no role get 403, as everywhere in the API; anonymous callers 401.
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from queues.api.permissions import request_access

ADMIN_ONLY_ACTIONS = frozenset({"apply"})


class PlaygroundPermission(BasePermission):
    message = "Only admins can apply a playground run."

    def has_permission(self, request: Request, view: Any) -> bool:
        access = request_access(request)
        if not access.is_authenticated:
            return False
        if access.is_admin:
            return True
        if not access.is_tenant:
            self.message = "The playground is for admins and tenants."
            return False
        return True  # detail actions: the scoped queryset answers 404 for another user's object

    def has_object_permission(self, request: Request, view: Any, obj: Any) -> bool:
        if getattr(view, "action", None) in ADMIN_ONLY_ACTIONS:
            return request_access(request).is_admin
        return True
