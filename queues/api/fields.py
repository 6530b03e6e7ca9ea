"""Serializer fields of the queues API: a LocalQueue named ``namespace/name`` (and its OpenAPI shape)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from rest_framework import serializers
from rest_framework.relations import PKOnlyObject

from queues.models import LocalQueue

_KEY = re.compile(r"^([a-z0-9-]{1,63})/([a-z0-9-]{1,63})$")


class LocalQueueKeyField(serializers.RelatedField[LocalQueue, str, str]):
    """A LocalQueue named ``namespace/name``, among those the request's user may see."""

    default_error_messages = {
        "invalid": 'expected a LocalQueue as "namespace/name", e.g. "team-a/main"',
        "does_not_exist": "LocalQueue {local_queue} does not exist",
    }

    def __init__(self, *, scope: Callable[[QuerySet, Any], QuerySet] | None = None, **kwargs: Any) -> None:
        self.scope = scope
        super().__init__(**kwargs)

    def get_queryset(self) -> QuerySet:
        queryset = LocalQueue.objects.select_related("namespace", "cluster_queue")
        request = self.context.get("request")
        if self.scope is not None and request is not None:
            queryset = self.scope(queryset, request)
        return queryset

    def to_internal_value(self, data: Any) -> LocalQueue:
        match = _KEY.match(data) if isinstance(data, str) else None
        if match is None:
            self.fail("invalid")
        namespace, name = match.groups()
        local_queue = self.get_queryset().filter(namespace__name=namespace, name=name).first()
        if local_queue is None:
            self.fail("does_not_exist", local_queue=data)
        return local_queue

    def to_representation(self, value: LocalQueue | PKOnlyObject) -> str:
        # DRF passes a PKOnlyObject only with use_pk_only_optimization, which RelatedField leaves off
        assert isinstance(value, LocalQueue)
        return value.key


class LocalQueueKeyFieldSchema(OpenApiSerializerFieldExtension):
    target_class = LocalQueueKeyField

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "string", "pattern": r"^[a-z0-9-]{1,63}/[a-z0-9-]{1,63}$"}
        if self.target.allow_null:
            schema["nullable"] = True
        return schema
