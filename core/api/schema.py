"""OpenAPI details drf-spectacular cannot infer: the quantity fields, the models' function
validators (``ValidatedAutoSchema``), query parameters, conditional requirements and the error
answers. The rule: the schema is never looser than the validation behind it.

Imported by ``fairportal.urls`` (extensions register on import, and the URLconf is loaded
before any schema is generated); the hook is named in ``SPECTACULAR_SETTINGS``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiSerializerFieldExtension
from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers

from core.validators import (
    validate_dns_label,
    validate_non_negative_weight,
    validate_positive_weight,
    validate_resource_name,
)
from fairshare.quantities import MAX_MILLIS, MAX_QUANTITY_TEXT

# DRF's CharField refuses NUL characters, and trims whitespace before "may not be blank".
NO_NUL = "^[^\\x00]*$"
NOT_BLANK = "^[^\\x00]*[^\\x00\\s\\x1c-\\x1f\\x85][^\\x00]*$"
# The engine's grammar (fairshare.quantities), without a sign: API quantities are never negative.
QUANTITY_PATTERN = r"^[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([numkMGTPE]|[KMGTPE]i|[eE][-+]?0*[0-9]{1,3})?$"

DNS_LABEL = {"pattern": "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", "maxLength": 63}
RESOURCE_NAME = {
    "pattern": "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    "[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$",
    "maxLength": 253,
}
# What the models' function validators accept, for the schema (drf-spectacular reads only the
# validator classes): the schema is never looser than the validation behind it.
VALIDATOR_SCHEMAS: dict[Any, dict[str, Any]] = {
    validate_dns_label: DNS_LABEL,
    validate_resource_name: RESOURCE_NAME,
    validate_non_negative_weight: {"minimum": 0},
    validate_positive_weight: {"minimum": 0.0001},  # weights keep 4 decimals: less rounds to 0
}

QUANTITY_IN = {
    "oneOf": [
        {
            "type": "string",
            "pattern": QUANTITY_PATTERN,
            "minLength": 1,
            "maxLength": MAX_QUANTITY_TEXT,
            "example": "2Gi",
        },
        {"type": "number", "minimum": 0, "maximum": MAX_MILLIS // 1000, "example": 4},
    ],
    "description": 'Kubernetes quantity ("500m", "2Gi") or a number in base units (cores, bytes, GPUs), '
    f"at most {MAX_MILLIS // 1000} base units",
}
QUANTITY_OUT = {"type": "number", "description": "In base units (cores, bytes, GPUs)"}


URL_SCHEMES = r"^([hH][tT][tT][pP][sS]?|[fF][tT][pP][sS]?)://[^\s/?#]+"  # ECMA-262 regex: no inline flags


class ValidatedAutoSchema(AutoSchema):
    """drf-spectacular's schema, plus the constraints of the models' function validators and of
    list serializers' ``min_length``/``max_length`` (``pod_sets`` has 1 to 8 items)."""

    def _insert_field_validators(self, field: Any, schema: dict[str, Any]) -> None:
        super()._insert_field_validators(field, schema)
        for validator in getattr(field, "validators", []):
            for known, extra in VALIDATOR_SCHEMAS.items():
                if validator is known:
                    if "minimum" in extra:
                        schema.pop("exclusiveMinimum", None)
                    schema.update(extra)
                    if "pattern" in extra and getattr(field, "allow_blank", False):
                        schema["pattern"] = f"^$|{extra['pattern']}"
        if isinstance(field, serializers.CharField) and not field.read_only and schema.get("type") == "string":
            if not {"pattern", "enum", "format"} & set(schema):
                schema["pattern"] = NO_NUL if field.allow_blank else NOT_BLANK
            if not field.allow_blank and "minLength" not in schema and "enum" not in schema:
                schema["minLength"] = 1

    def _map_serializer_field(self, field: Any, direction: str, bypass_extensions: bool = False) -> dict[str, Any]:
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if not isinstance(schema, dict):
            return schema
        if isinstance(field, serializers.DecimalField) and getattr(field, "rounds_to_places", False):
            # Rounded to decimal_places first: the largest value that still fits max_digits after
            # rounding is half a unit of the last place below 10**(max_digits - decimal_places).
            if schema.get("exclusiveMaximum") and field.max_digits is not None and field.decimal_places is not None:
                schema["maximum"] = float(
                    Decimal(10) ** (field.max_digits - field.decimal_places)
                    - Decimal("0.5").scaleb(-field.decimal_places)
                )
        if isinstance(field, serializers.URLField):
            # Django's URLValidator takes http(s) and ftp(s) URLs only; "format: uri" alone allows any scheme.
            for branch in schema.get("oneOf", [schema]):
                if branch.get("format") == "uri":
                    branch["pattern"] = URL_SCHEMES
        if isinstance(field, serializers.ListSerializer):
            min_length = field.min_length  # type: ignore[attr-defined]  # DRF's ListSerializer has it; the stubs omit it
            max_length = field.max_length  # type: ignore[attr-defined]  # as min_length
            if min_length is not None:
                schema["minItems"] = min_length
            if max_length is not None:
                schema["maxItems"] = max_length
        return schema


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
    target_class = "core.api.fields.QuantityField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        return dict(QUANTITY_IN if direction == "request" else QUANTITY_OUT)


class ResourceQuantitiesFieldSchema(OpenApiSerializerFieldExtension):
    target_class = "core.api.fields.ResourceQuantitiesField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        values = QUANTITY_IN if direction == "request" else QUANTITY_OUT
        schema: dict[str, Any] = {"type": "object", "additionalProperties": dict(values)}
        if direction == "request":
            schema["maxProperties"] = self.target.max_resources
            schema["propertyNames"] = dict(RESOURCE_NAME)  # JSON Schema's key rule (used by validators)
            if not self.target.allow_empty:
                schema["minProperties"] = 1
        return schema


class FormattedQuantityFieldSchema(OpenApiSerializerFieldExtension):
    target_class = "core.api.fields.FormattedQuantityField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        return {"type": "string", "nullable": True, "readOnly": True, "description": "Kubernetes notation"}


class FormattedResourcesFieldSchema(OpenApiSerializerFieldExtension):
    target_class = "core.api.fields.FormattedResourcesField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        return {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "readOnly": True,
            "description": "The same amounts in Kubernetes notation",
        }


class NameFieldSchema(OpenApiSerializerFieldExtension):
    target_class = "core.api.fields.NameField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "string", **DNS_LABEL, "description": "A name (Kubernetes DNS label)"}
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
            "code": {
                "type": "string",
                "enum": ["invalid_transition", "protected", "conflict", "run_not_finished", "policy_changed"],
            },
            "state": {"type": "string", "description": "The workload's current state (invalid_transition)"},
            "status": {"type": "string", "description": "The run's status (run_not_finished)"},
            "problems": {"type": "array", "items": {"type": "string"}, "description": "What changed (policy_changed)"},
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


def empty_query_means_absent(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """Postprocessing hook: an empty query parameter (``?state=&page=``, what a form sends for
    "any") means "not given" for every filter, the paging and the ordering, so the schema says so
    (``allowEmptyValue``). Text parameters also say they take no NUL character (Django refuses it)."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                if parameter.get("in") != "query" or schema.get("type") == "array":
                    continue  # a repeated parameter (?state=A&state=B) takes real values only
                parameter["allowEmptyValue"] = True
                if parameter.get("name") == "ordering":
                    continue  # DRF's ordering drops terms it does not know, whatever their characters
                if schema.get("type") == "string" and "pattern" not in schema and "enum" not in schema:
                    parameter["schema"] = {**schema, "pattern": NO_NUL}
    return result


# Request bodies whose required fields depend on another field's value, as JSON Schema says it.
CONDITIONAL_REQUIREMENTS: dict[str, dict[str, Any]] = {
    "ScenarioCreateRequest": {
        "oneOf": [
            {"properties": {"source": {"enum": ["preset"]}}, "required": ["source", "preset"]},
            {"properties": {"source": {"enum": ["live"]}}, "required": ["source"]},
            {"properties": {"source": {"enum": ["document"]}}, "required": ["source", "document"]},
        ]
    },
    # Budget.clean(): a ResourceHours budget names its resource, a WallTime one (the default) does
    # not; renewal every N days needs the N.
    "BudgetRequest": {
        "allOf": [
            {
                "oneOf": [
                    {"properties": {"kind": {"enum": ["WallTime"]}, "resource": {"enum": [""]}}},
                    {
                        "properties": {"kind": {"enum": ["ResourceHours"]}, "resource": {"minLength": 1}},
                        "required": ["kind", "resource"],
                    },
                ]
            },
            {
                "oneOf": [
                    {"properties": {"renewal": {"enum": ["none", "weekly", "monthly"]}}},
                    {
                        "properties": {
                            "renewal": {"enum": ["days"]},
                            "renewal_days": {"minimum": 1, "nullable": False},
                        },
                        "required": ["renewal", "renewal_days"],
                    },
                ]
            },
        ]
    },
}


def add_conditional_requirements(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """Postprocessing hook: ``CONDITIONAL_REQUIREMENTS`` into their components, and a request body
    is required wherever its JSON form has required fields (drf-spectacular leaves ``required``
    out when a body also has a plain-text form, as the Kueue import does)."""
    schemas = result.get("components", {}).get("schemas", {})
    for name, extra in CONDITIONAL_REQUIREMENTS.items():
        if name in schemas:
            schemas[name].update(extra)
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            body = operation.get("requestBody") if isinstance(operation, dict) else None
            if not body or body.get("required"):
                continue
            ref = body.get("content", {}).get("application/json", {}).get("schema", {}).get("$ref", "")
            if schemas.get(ref.rsplit("/", 1)[-1], {}).get("required"):
                body["required"] = True
    return result


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
