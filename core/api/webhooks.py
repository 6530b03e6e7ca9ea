"""Signed-webhook endpoints and their deliveries, for admins only (docs/webhooks.md).

``/api/v1/webhook-endpoints/``: list, create (the answer carries the secret, once), change,
delete, ``rotate`` (a new secret, once; the old one signs on for a while) and
``end-rotation``. ``/api/v1/webhook-deliveries/``: read-only, newest first, filtered by status,
endpoint, event type; ``redeliver`` sends one again. Secrets never appear in any other answer.
Writes go through ``core.webhooks_services`` (audited).
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import django_filters
from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter

from core import webhooks, webhooks_services
from core.api.views import ApiViewSet
from core.models import Surface, WebhookDelivery, WebhookEndpoint
from core.models.webhooks import SUBSCRIBABLE

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"  # no colon or space: budgets' endpoints are "budget:<id> <name>"
# http(s), a host, no user:password@ (the model refuses the rest; where the host resolves is DNS)
URL_PATTERN = r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[^\s@]*)?$"
MAX_OVERLAP_SECONDS = int(webhooks_services.MAX_ROTATION_OVERLAP.total_seconds())


@extend_schema_field({"type": "string", "format": "uri", "maxLength": 2000, "pattern": URL_PATTERN})
class EndpointUrlField(serializers.URLField):
    """An http(s) URL without credentials; ``WebhookEndpoint.clean`` checks where it resolves."""


class WebhookEndpointSerializer(serializers.ModelSerializer):
    name = serializers.RegexField(NAME_PATTERN, max_length=100)
    url = EndpointUrlField(max_length=2000)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=SUBSCRIBABLE), min_length=1, max_length=len(SUBSCRIBABLE)
    )
    rotating = serializers.BooleanField(read_only=True, help_text="A previous secret still signs too")

    class Meta:
        model = WebhookEndpoint
        fields = [
            "id",
            "name",
            "url",
            "events",
            "enabled",
            "scope",
            "rotating",
            "previous_secret_expires_at",
            "secret_rotated_at",
            "created_at",
        ]
        read_only_fields = ["id", "scope", "rotating", "previous_secret_expires_at", "secret_rotated_at", "created_at"]


class SecretSerializer(serializers.Serializer):
    secret = serializers.CharField(help_text="whsec_<base64>: shown in this answer only")
    endpoint = WebhookEndpointSerializer()


class RotateSerializer(serializers.Serializer):
    keep_previous_seconds = serializers.IntegerField(
        min_value=0,
        max_value=MAX_OVERLAP_SECONDS,
        allow_null=True,
        required=False,
        default=86400,
        help_text="How long the old secret keeps signing too (default one day; 0: not at all; null: until end-rotation)",
    )


class WebhookDeliverySerializer(serializers.ModelSerializer):
    endpoint = serializers.CharField(source="endpoint.name", read_only=True)

    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "endpoint",
            "message_id",
            "event_type",
            "source",
            "source_id",
            "status",
            "attempts",
            "next_attempt_at",
            "last_attempt_at",
            "last_status_code",
            "last_error",
            "delivered_at",
            "created_at",
        ]
        read_only_fields = fields


class WebhookDeliveryDetailSerializer(WebhookDeliverySerializer):
    payload = serializers.SerializerMethodField(help_text="The JSON body sent (signed) on every attempt")

    class Meta(WebhookDeliverySerializer.Meta):
        fields = [*WebhookDeliverySerializer.Meta.fields, "payload"]
        read_only_fields = fields

    @extend_schema_field({"type": "object", "additionalProperties": True})
    def get_payload(self, delivery: WebhookDelivery) -> Any:
        return json.loads(delivery.body)


def _budget_owned(error: webhooks_services.BudgetEndpointError) -> Response:
    return Response({"detail": str(error), "code": "conflict"}, status=status.HTTP_409_CONFLICT)


class WebhookEndpointViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    ApiViewSet,
):
    """Where signed webhooks go. A budget's own endpoint (scope ``budget``) follows the budget's
    ``webhook_url``: only its secret is rotated here (other writes are a 409)."""

    serializer_class = WebhookEndpointSerializer
    tenant_read = False  # admins only: tenants and executors get 403 on every action
    ordering_fields = ["name", "created_at"]

    def base_queryset(self) -> QuerySet:
        return WebhookEndpoint.objects.order_by("name")

    @extend_schema(responses={201: SecretSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        endpoint, secret = webhooks_services.create_endpoint(
            **serializer.validated_data, actor=request.user, surface=Surface.API
        )
        answer = {"secret": secret, "endpoint": WebhookEndpointSerializer(endpoint).data}
        return Response(answer, status=status.HTTP_201_CREATED, headers={"Cache-Control": "no-store"})

    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        endpoint = self.get_object()
        serializer = self.get_serializer(endpoint, data=request.data, partial=kwargs.get("partial", False))
        serializer.is_valid(raise_exception=True)
        try:
            webhooks_services.update_endpoint(
                endpoint, dict(serializer.validated_data), actor=request.user, surface=Surface.API
            )
        except webhooks_services.BudgetEndpointError as error:
            return _budget_owned(error)
        return Response(WebhookEndpointSerializer(self.fresh(endpoint)).data)

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        try:
            webhooks_services.delete_endpoint(self.get_object(), actor=request.user, surface=Surface.API)
        except webhooks_services.BudgetEndpointError as error:
            return _budget_owned(error)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=RotateSerializer, responses={200: SecretSerializer})
    @action(detail=True, methods=["post"])
    def rotate(self, request: Request, pk: str | None = None) -> Response:
        """A new secret, in this answer only; the old one keeps signing too for
        ``keep_previous_seconds`` (every message carries both signatures meanwhile)."""
        endpoint = self.get_object()
        body = RotateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        seconds = body.validated_data.get("keep_previous_seconds", 86400)
        keep = None if seconds is None else timedelta(seconds=seconds)
        secret = webhooks_services.rotate(endpoint, keep_previous_for=keep, actor=request.user, surface=Surface.API)
        answer = {"secret": secret, "endpoint": WebhookEndpointSerializer(self.fresh(endpoint)).data}
        return Response(answer, headers={"Cache-Control": "no-store"})

    @extend_schema(request=None, responses={200: WebhookEndpointSerializer})
    @action(detail=True, methods=["post"], url_path="end-rotation")
    def end_rotation(self, request: Request, pk: str | None = None) -> Response:
        """Only the active secret signs from now on."""
        endpoint = self.get_object()
        webhooks_services.end_rotation(endpoint, actor=request.user, surface=Surface.API)
        return Response(WebhookEndpointSerializer(self.fresh(endpoint)).data)


class WebhookDeliveryFilterSet(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=WebhookDelivery.Status.choices)
    endpoint = django_filters.CharFilter(field_name="endpoint__name")
    event_type = django_filters.CharFilter(max_length=40)

    class Meta:
        model = WebhookDelivery
        fields = ["status", "endpoint", "event_type"]


class WebhookDeliveryViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    """Every message to every endpoint, newest first: status, attempts, the next attempt, the
    last HTTP status and a fixed sentence for the last error (never the receiver's answer)."""

    filterset_class = WebhookDeliveryFilterSet
    tenant_read = False  # admins only
    ordering_fields = ["created_at"]

    def get_serializer_class(self) -> type[serializers.BaseSerializer]:
        return WebhookDeliveryDetailSerializer if self.action == "retrieve" else WebhookDeliverySerializer

    def base_queryset(self) -> QuerySet:
        return WebhookDelivery.objects.select_related("endpoint").order_by("-created_at", "-id")

    @extend_schema(request=None, responses={202: WebhookDeliverySerializer})
    @action(detail=True, methods=["post"])
    def redeliver(self, request: Request, pk: str | None = None) -> Response:
        """Send it again from the first attempt: the same ``webhook-id`` and body, signed afresh."""
        delivery = self.get_object()
        webhooks.redeliver([delivery])
        return Response(WebhookDeliverySerializer(self.fresh(delivery)).data, status=status.HTTP_202_ACCEPTED)


def register_routes(router: BaseRouter) -> None:
    router.register("webhook-endpoints", WebhookEndpointViewSet, basename="webhook-endpoint")
    router.register("webhook-deliveries", WebhookDeliveryViewSet, basename="webhook-delivery")
