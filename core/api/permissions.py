"""The DRF permission classes: ``core.access``'s rules applied to what each viewset declares.

A viewset states, as class attributes:

- ``tenant_read``: tenants may list and retrieve (their own namespaces' objects, for
  namespace-scoped viewsets; everything, for cluster-wide policy).
- ``tenant_scoped``: ``get_queryset`` holds what ``Access.visible_to`` lets the user see (for
  namespace-scoped models, the user's namespaces), and ``Access.can_edit(obj)`` decides writes
  by the object's namespace. Detail actions then pass the view-level check so that another
  tenant's object is a 404 (the queryset hides it) rather than a 403; the object-level check
  decides for visible objects.
- ``tenant_write_actions``: actions an *editor* of the object's namespace may perform
  (``create`` is checked against the target namespace by the view).
- ``executor_actions``: actions members of the ``executors`` group may perform.

Admins may do everything. Anonymous requests get 401 (token authentication comes first, so
DRF answers with a ``WWW-Authenticate`` header).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from core.access import Access, access_for
from core.redaction import reason_redactor

READ_ACTIONS = frozenset({"list", "retrieve"})


def request_access(request: Request) -> Access:
    """The user's roles, loaded once per request."""
    cached = getattr(request, "_fairportal_access", None)
    if cached is None:
        cached = access_for(request.user)
        request._fairportal_access = cached  # type: ignore[attr-defined]
    return cached


def request_redactor(request: Request) -> Callable[[str], str]:
    """``core.redaction.reason_redactor`` for the request's user, built once per request."""
    cached = getattr(request, "_fairportal_redactor", None)
    if cached is None:
        cached = reason_redactor(request_access(request))
        request._fairportal_redactor = cached  # type: ignore[attr-defined]
    return cached


class RoleBasedAccess(BasePermission):
    message = "Your role does not allow this."

    def has_permission(self, request: Request, view: Any) -> bool:
        access = request_access(request)
        if not access.is_authenticated:
            return False
        if access.is_admin:
            return True
        action = getattr(view, "action", None)
        if action is None:
            return True  # a method this endpoint does not have: DRF answers 405 to everyone alike
        if access.is_executor and action in getattr(view, "executor_actions", ()):
            return True
        if not access.is_tenant:
            return False
        if action in READ_ACTIONS:
            return bool(getattr(view, "tenant_read", False))
        if action == "create":
            return "create" in getattr(view, "tenant_write_actions", ())
        # Other actions name one object: let the scoped queryset answer 404 for another
        # tenant's object before the object-level check answers 403 for a visible one.
        return bool(getattr(view, "tenant_scoped", False))

    def has_object_permission(self, request: Request, view: Any, obj: Any) -> bool:
        access = request_access(request)
        if access.is_admin:
            return True
        action = getattr(view, "action", None)
        if action in READ_ACTIONS:
            return True  # the queryset already holds only what this user may see
        if access.is_executor and action in getattr(view, "executor_actions", ()):
            return True
        if action in getattr(view, "tenant_write_actions", ()):
            return access.can_edit(obj)
        return False


class PlaygroundPermission(BasePermission):
    """The playground's API: admins everything; tenants create and read their own scenarios and
    runs (another user's is a 404: the queryset hides it), and the view's ``admin_actions``
    (``apply``) on their own run are a 403. Signed-in users with no role get 403, as everywhere
    in the API; anonymous callers 401."""

    message = "Only admins can apply a playground run."

    def has_permission(self, request: Request, view: Any) -> bool:
        access = request_access(request)
        if not access.is_authenticated:
            return False
        if not access.can_use_playground:
            self.message = "The playground is for admins and tenants."
            return False
        return True  # detail actions: the scoped queryset answers 404 for another user's object

    def has_object_permission(self, request: Request, view: Any, obj: Any) -> bool:
        if getattr(view, "action", None) in getattr(view, "admin_actions", ()):
            return request_access(request).can_apply_runs
        return True
