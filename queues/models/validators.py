"""The validators of ``core.validators``, under the path the migrations name them by."""

from core.validators import (
    validate_dns_label,
    validate_non_negative_weight,
    validate_positive_weight,
    validate_resource_name,
)

__all__ = ["validate_dns_label", "validate_non_negative_weight", "validate_positive_weight", "validate_resource_name"]
