"""The base viewsets: roles and visibility from ``core.access``, services for writes, fresh
rows in answers."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest, JsonResponse
from rest_framework import mixins, viewsets
from rest_framework.serializers import BaseSerializer

from core.access import Access
from core.api.permissions import RoleBasedAccess, request_access
from core.audit import audited_delete
from core.models import Surface


class ApiViewSet(viewsets.GenericViewSet):
    """Declares who may do what (see ``core.api.permissions``) and scopes rows to the user:
    a ``tenant_scoped`` viewset lists what ``Access.visible_to`` gives (the model's one rule)."""

    permission_classes = [RoleBasedAccess]
    lookup_value_regex = "[^/]+"  # any id reaches the view, which answers a JSON 404 for a bad one
    max_body_bytes = 64 * 1024  # a workload or a ClusterQueue with 64 quota rows is a few KiB
    tenant_read = True
    tenant_scoped = False
    tenant_write_actions: frozenset[str] = frozenset()
    executor_actions: frozenset[str] = frozenset()

    @property
    def access(self) -> Access:
        return request_access(self.request)

    def base_queryset(self) -> QuerySet:
        raise NotImplementedError(f"{type(self).__name__} must say which rows it lists")

    def scope(self, queryset: QuerySet) -> QuerySet:
        if not self.tenant_scoped:
            return queryset
        return self.access.visible_to(queryset)

    def get_queryset(self) -> QuerySet:
        if getattr(self, "swagger_fake_view", False):  # schema generation: no user, no scoping
            return self.base_queryset()
        return self.scope(self.base_queryset())

    def fresh(self, obj: models.Model) -> models.Model:
        """The object as the list shows it (joins, prefetches, counts), after a write."""
        return self.base_queryset().get(pk=obj.pk)


class PolicyViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    ApiViewSet,
):
    """Policy objects: admins write (serializers call ``save_policy_object``), deletes audited
    (``core.audit.audited_delete``; ``ProtectedError`` while something still uses it)."""

    def perform_create(self, serializer: BaseSerializer) -> None:
        serializer.instance = self.fresh(serializer.save())

    def perform_update(self, serializer: BaseSerializer) -> None:
        serializer.instance = self.fresh(serializer.save())

    def perform_destroy(self, instance: Any) -> None:
        audited_delete(instance, actor=self.request.user, surface=Surface.API)


def api_not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """Any other path under /api/: a JSON 404 like the API's own, not the HTML page."""
    return JsonResponse({"detail": "Not found."}, status=404)
