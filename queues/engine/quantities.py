"""Kubernetes quantities in and out, exact integer milli-units inside.

Every resource amount is held as an ``int`` count of thousandths of the resource's base unit
("millis"): ``500m`` CPU is 500, ``4`` GPUs is 4000, ``1Gi`` memory is 1073741824000. One
scale for every resource keeps arithmetic exact and needs no table of units, and Kubernetes
itself never resolves anything finer than ``1m`` (it rounds up, and so do we).

Parsing uses the official ``kubernetes`` client's ``parse_quantity``; this module only adds the
integer scale, the error messages and the formatting back to Kubernetes notation.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import ROUND_CEILING, Decimal, InvalidOperation

from kubernetes.utils.quantity import parse_quantity

from queues.engine.errors import ValidationError

MILLIS_PER_UNIT = 1000

# Resources measured in bytes are printed with binary suffixes (2Gi), the rest in decimal.
_BYTE_RESOURCES = ("memory", "ephemeral-storage", "storage")
_BINARY_SUFFIXES = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL_SUFFIXES = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))

# A Kubernetes resource name: an optional DNS-subdomain prefix and a name part of up to 63 chars.
_NAME_PART = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_PREFIX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_RESOURCE_NAME = re.compile(rf"^({_PREFIX}/)?{_NAME_PART}$")


def parse_millis(value: object, field: str = "quantity", *, allow_negative: bool = False) -> int:
    """Parse a Kubernetes quantity (``"500m"``, ``"2Gi"``, ``4``, ``0.5``) into integer millis."""
    if isinstance(value, bool) or value is None:
        raise ValidationError(field, f"expected a quantity such as 500m, 2Gi or 4, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValidationError(field, f"{value!r} is not a finite quantity")
    text = str(value).strip()
    if not text:
        raise ValidationError(field, "expected a quantity such as 500m, 2Gi or 4, got an empty string")
    try:
        amount = parse_quantity(text)
    except (ValueError, InvalidOperation, TypeError):
        raise ValidationError(field, f"{text!r} is not a valid Kubernetes quantity (e.g. 500m, 2Gi, 4)") from None
    if not amount.is_finite():
        raise ValidationError(field, f"{text!r} is not a finite quantity")
    if amount < 0 and not allow_negative:
        raise ValidationError(field, f"must not be negative, got {text!r}")
    millis = (amount * MILLIS_PER_UNIT).to_integral_value(rounding=ROUND_CEILING)
    return int(millis)


def validate_resource_name(name: object, field: str = "resource") -> str:
    """Check a Kubernetes resource name (``cpu``, ``memory``, ``nvidia.com/gpu``)."""
    if not isinstance(name, str) or not _RESOURCE_NAME.match(name) or len(name) > 253:
        raise ValidationError(field, f"{name!r} is not a valid resource name (e.g. cpu, memory, nvidia.com/gpu)")
    return name


def parse_resource_list(data: object, field: str = "resources") -> dict[str, int]:
    """Parse ``{resource: quantity}`` into ``{resource: millis}``, naming the bad entry on error."""
    if not isinstance(data, Mapping):
        raise ValidationError(field, f"expected a mapping of resource names to quantities, got {type(data).__name__}")
    parsed: dict[str, int] = {}
    for name, quantity in data.items():
        validate_resource_name(name, f"{field}.{name}")
        parsed[name] = parse_millis(quantity, f"{field}.{name}")
    return parsed


def _is_byte_resource(resource: str) -> bool:
    return resource in _BYTE_RESOURCES or resource.startswith("hugepages-")


def format_quantity(millis: int, resource: str = "") -> str:
    """Kubernetes notation for ``millis`` of ``resource``: the shortest exact form."""
    if millis % MILLIS_PER_UNIT:
        return f"{millis}m"
    units = millis // MILLIS_PER_UNIT
    if units == 0:
        return "0"
    suffixes = _BINARY_SUFFIXES if _is_byte_resource(resource) else _DECIMAL_SUFFIXES
    for suffix, size in suffixes:
        if abs(units) >= size and units % size == 0:
            return f"{units // size}{suffix}"
    return str(units)


def format_resource_list(millis_by_resource: Mapping[str, int]) -> dict[str, str]:
    return {name: format_quantity(amount, name) for name, amount in millis_by_resource.items()}


def to_base_units(millis: int | float) -> int | float:
    """A JSON number in the resource's base unit (cores, bytes, GPUs): int when exact."""
    if isinstance(millis, int) and millis % MILLIS_PER_UNIT == 0:
        return millis // MILLIS_PER_UNIT
    return millis / MILLIS_PER_UNIT


def from_base_units(value: int | float | Decimal) -> int:
    """Millis for a number given in base units (rounded up, as Kubernetes does)."""
    return int((Decimal(str(value)) * MILLIS_PER_UNIT).to_integral_value(rounding=ROUND_CEILING))
