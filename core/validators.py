"""Field validators shared by the apps' models (and so by forms, the API and its schema)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError

from fairshare.errors import ValidationError as EngineValidationError
from fairshare.quantities import validate_resource_name as engine_validate_resource_name

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


def validate_dns_label(value: str) -> None:
    """Kubernetes object names: lower-case letters, digits and '-', at most 63 characters."""
    if not _DNS_LABEL.match(value or ""):
        raise ValidationError(
            "%(value)r is not a valid name: use lower-case letters, digits and '-', "
            "start and end with a letter or digit, at most 63 characters",
            params={"value": value},
            code="invalid_name",
        )


def validate_resource_name(value: str) -> None:
    try:
        engine_validate_resource_name(value, "")
    except EngineValidationError as error:
        raise ValidationError(error.message, code="invalid_resource") from None


def validate_non_negative_weight(value: Decimal) -> None:
    if value is None or value < 0:
        raise ValidationError("weight must be 0 or more, got %(value)s", params={"value": value}, code="min_value")


def validate_positive_weight(value: Decimal) -> None:
    if value is None or value <= 0:
        raise ValidationError("weight must be greater than 0, got %(value)s", params={"value": value}, code="min_value")


MAX_NODE_LABELS = 32
NODE_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
NODE_LABEL_VALUE_MESSAGE = "label values are strings of at most 63 letters, digits, '-', '_' or '.'"


def node_label_errors(labels: Any) -> dict[str, list[str]]:
    """The problems of a flavor's Kubernetes node labels (qualified names to values of at most 63
    characters), keyed by label name (``""`` for the whole mapping); empty when they are fine.
    The one rule: ``ResourceFlavor.clean`` (every surface) and the API field both ask it."""
    if not isinstance(labels, Mapping):
        return {"": ["expected a mapping of label names to values"]}
    if len(labels) > MAX_NODE_LABELS:
        return {"": [f"at most {MAX_NODE_LABELS} labels, got {len(labels)}"]}
    errors: dict[str, list[str]] = {}
    for name, value in labels.items():
        try:
            engine_validate_resource_name(name, "")
        except EngineValidationError:
            errors[str(name)] = ["is not a valid label name (e.g. cloud.google.com/gke-accelerator)"]
            continue
        if not isinstance(value, str) or len(value) > 63 or not NODE_LABEL_VALUE.match(value):
            errors[str(name)] = [NODE_LABEL_VALUE_MESSAGE]
    return errors
