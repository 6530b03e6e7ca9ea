"""The base viewsets: roles and visibility from ``core.access``, services for writes, fresh
rows in answers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.db import models, transaction
from django.db.models import QuerySet
from django.http import HttpRequest, JsonResponse
from rest_framework import mixins, viewsets
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer

from core.access import Access
from core.api.etags import (
    PolicyObjectSchema,
    PreconditionRequired,
    etag,
    if_match,
    precondition_failed,
    precondition_required,
)
from core.api.permissions import RoleBasedAccess, request_access
from core.audit import audited_delete
from core.models import Surface
from core.versions import StaleVersion, lock_current, refuse_stale, version_of


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


CONDITIONAL_ACTIONS = frozenset({"update", "partial_update", "destroy"})


class PolicyViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    ApiViewSet,
):
    """Policy objects: admins write (serializers call ``save_policy_object``), deletes audited
    (``core.audit.audited_delete``; ``ProtectedError`` while something still uses it).

    Conditional writes (``core.api.etags``): a detail answer carries the object's ``ETag``; a
    PUT, PATCH or DELETE with ``If-Match`` runs in one transaction that first locks the row
    (after ``lock_first``, for a model whose writers take another lock before it), reloads the
    object and compares its version, then validates and writes: a stale one is a 412 and writes
    nothing. Without ``If-Match`` nothing is locked ahead (the write path locks as before). The
    precondition is evaluated in ``get_object``, after the 404 and the permission checks.
    Queries: a GET detail as before (the version is hashed from the row and its prefetched
    quota rows); a conditional write two more (lock-and-reload, quota rows)."""

    schema = PolicyObjectSchema()
    _written: models.Model | None = None  # the object a create or an update wrote, re-read

    def lock_first(self, instance: Any) -> Callable[[], None] | None:
        """A lock to take before the object's row in a conditional write (None: none)."""
        return None

    def etag_of(self, instance: models.Model) -> str:
        return etag(version_of(instance, self.access))

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        instance = self.get_object()
        response = Response(self.get_serializer(instance).data)
        response["ETag"] = self.etag_of(instance)
        return response

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        response = super().create(request, *args, **kwargs)
        return self._with_etag(response)

    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        if not self._conditional(request):
            return self._with_etag(super().update(request, *args, **kwargs))
        with transaction.atomic():
            response = super().update(request, *args, **kwargs)
        return self._with_etag(response)

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        if not self._conditional(request):
            return super().destroy(request, *args, **kwargs)
        with transaction.atomic():
            return super().destroy(request, *args, **kwargs)

    @staticmethod
    def _conditional(request: Request) -> bool:
        """Whether ``get_object`` will evaluate a precondition (then the write runs in its transaction)."""
        return "If-Match" in request.headers or bool(getattr(settings, "API_REQUIRE_IF_MATCH", False))

    def get_object(self) -> Any:
        """The object (404 when unknown or not visible, 403 when the role may not write it); for a
        PUT, PATCH or DELETE then the precondition: locked, reloaded, checked against ``If-Match``."""
        instance = super().get_object()
        if self.action in CONDITIONAL_ACTIONS:
            condition = if_match(self.request)
            if condition is not None:
                try:
                    current = lock_current(instance, self.access, lock_first=self.lock_first(instance))
                except ObjectDoesNotExist:
                    raise NotFound() from None  # deleted while this request waited on its lock
                if not condition.matches(current):
                    raise refuse_stale(instance, current, self.access)
        return instance

    def _with_etag(self, response: Response) -> Response:
        written = getattr(self, "_written", None)
        if written is not None and response.status_code in {200, 201}:
            response["ETag"] = self.etag_of(written)
        return response

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, StaleVersion):
            return precondition_failed(exc)
        if isinstance(exc, PreconditionRequired):
            return precondition_required()
        return super().handle_exception(exc)

    def perform_create(self, serializer: BaseSerializer) -> None:
        serializer.instance = self._written = self.fresh(serializer.save())

    def perform_update(self, serializer: BaseSerializer) -> None:
        serializer.instance = self._written = self.fresh(serializer.save())

    def perform_destroy(self, instance: Any) -> None:
        audited_delete(instance, actor=self.request.user, surface=Surface.API)


def api_not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """Any other path under /api/: a JSON 404 like the API's own, not the HTML page."""
    return JsonResponse({"detail": "Not found."}, status=404)
