"""Serializer fields for Kubernetes quantities, resource maps and names.

Quantities come in as Kubernetes notation (``"2Gi"``, ``"500m"``) or as JSON numbers in the
resource's base unit (cores, bytes, GPUs: ``0.5`` is 500m CPU), and go out as base-unit numbers,
with a ``*_formatted`` sibling in Kubernetes notation. Inside, every amount is integer millis.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers

from core.formatting import format_for_humans
from core.validators import NODE_LABEL_VALUE, NODE_LABEL_VALUE_MESSAGE, node_label_errors
from fairshare.errors import ValidationError as EngineValidationError
from fairshare.quantities import parse_millis, to_base_units, validate_resource_name

MAX_RESOURCES = 32


def millis_or_error(value: Any) -> int:
    """Integer millis of an API quantity (the engine's one parser, bounds included); raises the
    field's ``ValidationError`` with the reason."""
    try:
        return parse_millis(value, "")
    except EngineValidationError as error:
        raise serializers.ValidationError(error.message) from None


class QuantityField(serializers.Field):
    """One quantity: Kubernetes notation or a base-unit number in, a base-unit number out."""

    def to_internal_value(self, data: Any) -> int:
        return millis_or_error(data)

    def to_representation(self, value: int) -> int | float:
        return to_base_units(value)


class FormattedQuantityField(serializers.Field):
    """Read-only Kubernetes notation of ``attribute`` of a row that has a ``resource``."""

    def __init__(self, attribute: str, **kwargs: Any) -> None:
        self.attribute = attribute
        kwargs.update(source="*", read_only=True)
        super().__init__(**kwargs)

    def to_representation(self, row: Any) -> str | None:
        value = getattr(row, self.attribute)
        return None if value is None else format_for_humans(value, row.resource)


class ResourceQuantitiesField(serializers.Field):
    """``{resource: quantity}``: names checked as Kubernetes resource names, amounts as quantities.

    Out, ``{resource: base-unit number}``; ``FormattedResourcesField`` gives the notation.
    """

    def __init__(self, *, max_resources: int = MAX_RESOURCES, allow_empty: bool = True, **kwargs: Any) -> None:
        self.max_resources = max_resources
        self.allow_empty = allow_empty
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> dict[str, int]:
        if not isinstance(data, Mapping):
            raise serializers.ValidationError('expected a mapping of resource names to quantities, e.g. {"cpu": "2"}')
        if not data and not self.allow_empty:
            raise serializers.ValidationError("must name at least one resource")
        if len(data) > self.max_resources:
            raise serializers.ValidationError(f"at most {self.max_resources} resources, got {len(data)}")
        parsed: dict[str, int] = {}
        errors: dict[str, list[str]] = {}
        for resource, quantity in data.items():
            try:
                validate_resource_name(resource, "")
                parsed[resource] = millis_or_error(quantity)
            except EngineValidationError as error:
                errors[str(resource)] = [error.message]
            except serializers.ValidationError as error:
                errors[str(resource)] = list(error.detail)  # type: ignore[arg-type]
        if errors:
            raise serializers.ValidationError(errors)
        return dict(sorted(parsed.items()))

    def to_representation(self, value: Mapping[str, int | float]) -> dict[str, int | float]:
        return {resource: to_base_units(amount) for resource, amount in value.items()}


class FormattedResourcesField(serializers.Field):
    """Read-only ``{resource: "2Gi"}`` for a ``{resource: millis}`` mapping found by ``getter``."""

    def __init__(self, getter: Callable[[Any], Mapping[str, int | float]], **kwargs: Any) -> None:
        self.getter = getter
        kwargs.update(source="*", read_only=True)
        super().__init__(**kwargs)

    def to_representation(self, instance: Any) -> dict[str, str]:
        return {
            resource: format_for_humans(round(amount), resource) for resource, amount in self.getter(instance).items()
        }


_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


class NameField(serializers.SlugRelatedField):
    """A related object named by its ``name`` (a Kubernetes DNS label, as all names here are).

    A value that cannot be a name is refused before it reaches the database, which would
    choke on some of them (PostgreSQL text cannot hold a NUL character).
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("slug_field", "name")
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str) or not _NAME.match(data):
            self.fail("does_not_exist", slug_name=self.slug_field, value=str(data)[:80])
        return super().to_internal_value(data)


LABEL_VALUE = RegexValidator(NODE_LABEL_VALUE, NODE_LABEL_VALUE_MESSAGE)


def validate_node_labels(labels: Any) -> dict[str, str]:
    """Kubernetes node labels: qualified names to values of at most 63 characters
    (``core.validators.node_label_errors``, the rule the model's ``clean`` applies too)."""
    errors = node_label_errors(labels)
    if errors:
        whole = errors.pop("", None)
        raise serializers.ValidationError(whole if whole else errors)
    return dict(labels)
