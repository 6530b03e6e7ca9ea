"""Field validators shared by the apps' models (and so by forms, the API and its schema)."""

from __future__ import annotations

import re
from decimal import Decimal

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
