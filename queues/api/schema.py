"""OpenAPI details drf-spectacular cannot infer: the quantity fields, and the error answers.

Imported by ``queues.api.urls`` (extensions register on import, and the URLconf is loaded
before any schema is generated); the hook is named in ``SPECTACULAR_SETTINGS``.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import build_basic_type
from drf_spectacular.types import OpenApiTypes

QUANTITY_PATTERN = r"^[+]?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$"

QUANTITY_IN = {
    "oneOf": [
        {"type": "string", "pattern": QUANTITY_PATTERN, "maxLength": 64, "example": "2Gi"},
        {"type": "number", "minimum": 0, "example": 4},
    ],
    "description": 'Kubernetes quantity ("500m", "2Gi") or a number in base units (cores, bytes, GPUs)',
}
QUANTITY_OUT = {"type": "number", "description": "In base units (cores, bytes, GPUs)"}


class HashedTokenScheme(OpenApiAuthenticationExtension):
    """API tokens (django-rest-knox, stored hashed) keep the scheme clients know: ``tokenAuth``,
    ``Authorization: Token <key>``."""

    target_class = "knox.auth.TokenAuthentication"
    name = "tokenAuth"
    priority = 1  # over drf-spectacular's own knox extension ("knoxApiToken")

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": 'Token-based authentication with required prefix "Token"',
        }


class QuantityFieldSchema(OpenApiSerializerFieldExtension):
    target_class = "queues.api.fields.QuantityField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        return dict(QUANTITY_IN if direction == "request" else QUANTITY_OUT)


class ResourceQuantitiesFieldSchema(OpenApiSerializerFieldExtension):
    target_class = "queues.api.fields.ResourceQuantitiesField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        values = QUANTITY_IN if direction == "request" else QUANTITY_OUT
        schema: dict[str, Any] = {"type": "object", "additionalProperties": dict(values)}
        if direction == "request":
            schema["maxProperties"] = self.target.max_resources
            if not self.target.allow_empty:
                schema["minProperties"] = 1
        return schema


class FormattedQuantityFieldSchema(OpenApiSerializerFieldExtension):
    target_class = "queues.api.fields.FormattedQuantityField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        return {"type": "string", "nullable": True, "readOnly": True, "description": "Kubernetes notation"}


class FormattedResourcesFieldSchema(OpenApiSerializerFieldExtension):
    target_class = "queues.api.fields.FormattedResourcesField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        return {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "readOnly": True,
            "description": "The same amounts in Kubernetes notation",
        }


class LocalQueueKeyFieldSchema(OpenApiSerializerFieldExtension):
    target_class = "queues.api.fields.LocalQueueKeyField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema = {**build_basic_type(OpenApiTypes.STR), "pattern": r"^[a-z0-9-]{1,63}/[a-z0-9-]{1,63}$"}
        if self.target.allow_null:
            schema["nullable"] = True
        return schema


# -- error answers, added to every operation so clients (and the fuzz test) know their shape --

ERROR_SCHEMAS: dict[str, dict[str, Any]] = {
    "FieldErrors": {
        "type": "object",
        "description": "Bad input: each key names a field (nested rows as lists of objects, "
        "non_field_errors for the whole body, detail for unparsable JSON), each value says what is wrong.",
        "additionalProperties": True,
    },
    "ErrorDetail": {
        "type": "object",
        "properties": {"detail": {"type": "string"}, "code": {"type": "string"}},
        "required": ["detail"],
    },
    "Conflict": {
        "type": "object",
        "properties": {
            "detail": {"type": "string"},
            "code": {"type": "string", "enum": ["invalid_transition", "protected", "conflict"]},
            "state": {"type": "string", "description": "The workload's current state (invalid_transition)"},
        },
        "required": ["detail", "code"],
    },
}
COMMON_ERRORS = {
    "400": ("FieldErrors", "Bad input; nothing was changed"),
    "401": ("ErrorDetail", "No or invalid credentials"),
    "403": ("ErrorDetail", "The user's role does not allow this"),
    "404": ("ErrorDetail", "No such object, or it belongs to another tenant"),
    "429": ("ErrorDetail", "Too many requests (API_THROTTLE_RATES), or too many what-if runs of this user"),
}
WRITE_ERRORS = {
    "409": ("Conflict", "Conflicts with the current state: an invalid transition, an object still in use"),
    "415": ("ErrorDetail", "The body is not JSON"),
}
IDEMPOTENCY_ERROR = ("ErrorDetail", "The Idempotency-Key was used before with a different body")
QUEUE_UNAVAILABLE = ("ErrorDetail", "The task queue could not be reached; the run was marked failed, nothing runs")


def add_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """Postprocessing hook: document the JSON error bodies every operation may answer with."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.update(ERROR_SCHEMAS)
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            errors = dict(COMMON_ERRORS)
            if method in {"post", "put", "patch", "delete"}:
                errors.update(WRITE_ERRORS)
            responses = operation.setdefault("responses", {})
            if "422" in responses:
                errors["422"] = IDEMPOTENCY_ERROR
            if "503" in responses:
                errors["503"] = QUEUE_UNAVAILABLE
            for code, (component, description) in errors.items():
                described = responses.get(code, {}).get("description") or description
                responses[code] = {
                    "description": described,
                    "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{component}"}}},
                }
    return result
