"""Kubernetes quantities in and out, exact integer milli-units inside.

Every resource amount is held as an ``int`` count of thousandths of the resource's base unit
("millis"): ``500m`` CPU is 500, ``4`` GPUs is 4000, ``1Gi`` memory is 1073741824000. One
scale for every resource keeps arithmetic exact and needs no table of units, and Kubernetes
itself never resolves anything finer than ``1m`` (it rounds up, and so do we).

``parse_quantity_decimal`` is the one parser every quantity input goes through (API, forms, the
Django admin, scenario files, Kueue manifests, the demo). It accepts Kubernetes' own grammar
only (apimachinery's ``resource.Quantity``: ASCII digits, an optional sign, one of the suffixes
``n u m k M G T P E``, ``Ki Mi Gi Ti Pi Ei`` or an exponent ``e3``/``E-2``): Python's looser
number syntax (``1_000``, Unicode digits such as ``١٢``, ``Infinity``, surrounding spaces) is
refused. Text is at most ``MAX_QUANTITY_TEXT`` characters, an exponent at most three digits, and
the amount at most ``MAX_MILLIS`` (what the database's BIGINT columns hold), so no input can
overflow the decimal arithmetic. The arithmetic itself is the official ``kubernetes`` client's
``parse_quantity``, run in a local decimal context wide enough to stay exact.
"""

from __future__ import annotations

import decimal
import math
import re
from collections.abc import Mapping
from decimal import ROUND_CEILING, Decimal

from kubernetes.utils.quantity import parse_quantity

from fairshare.errors import ValidationError

MILLIS_PER_UNIT = 1000
# The largest amount any quantity may have, in millis: a database BIGINT (about 9.2e15 base units).
MAX_MILLIS = 2**63 - 1
MAX_QUANTITY_TEXT = 64

# Resources measured in bytes are printed with binary suffixes (2Gi), the rest in decimal.
_BYTE_RESOURCES = ("memory", "ephemeral-storage", "storage")
_BINARY_SUFFIXES = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL_SUFFIXES = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))

# A Kubernetes resource name: an optional DNS-subdomain prefix and a name part of up to 63 chars.
_NAME_PART = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_PREFIX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_RESOURCE_NAME = re.compile(rf"^({_PREFIX}/)?{_NAME_PART}$")

# apimachinery's quantity grammar; [0-9] (not \d) and re.ASCII keep other scripts' digits out.
QUANTITY_SYNTAX = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[numkMGTPE]|[KMGTPE]i|[eE][+-]?[0-9]+)?"
_QUANTITY = re.compile(QUANTITY_SYNTAX, re.ASCII)
_EXPONENT = re.compile(r"[eE][+-]?([0-9]+)$", re.ASCII)
_EXAMPLES = "e.g. 500m, 2Gi, 4"
# Wide enough for 64 digits times 2**60 times 1000, exactly; no trap can fire on bounded input.
_EXACT = decimal.Context(prec=200, rounding=decimal.ROUND_HALF_EVEN, Emax=10_000, Emin=-10_000)


def _quantity_text(value: object, field: str) -> str:
    """The quantity as text in Kubernetes notation; numbers (JSON, YAML) become their decimal text."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        shown = "null" if value is None else type(value).__name__
        raise ValidationError(field, f"expected a quantity such as 500m, 2Gi or 4 (a string or a number), got {shown}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError(field, f"{value!r} is not a finite quantity")
        return repr(value)
    if isinstance(value, int):
        if abs(value) > MAX_MILLIS:
            raise ValidationError(field, f"is too large: at most {_max_text()}")
        return str(value)
    if not value:
        raise ValidationError(field, "expected a quantity such as 500m, 2Gi or 4, got an empty string")
    if len(value) > MAX_QUANTITY_TEXT:
        raise ValidationError(field, f"a quantity has at most {MAX_QUANTITY_TEXT} characters, got {len(value)}")
    return value


def _max_text() -> str:
    return f"{MAX_MILLIS // MILLIS_PER_UNIT:.2e} base units"


def parse_quantity_decimal(value: object, field: str = "quantity", *, allow_negative: bool = False) -> Decimal:
    """The exact amount of a Kubernetes quantity in base units (``"500m"`` is ``Decimal("0.5")``).

    Raises the engine's ``ValidationError`` naming ``field`` for anything that is not a bounded
    Kubernetes quantity; the message echoes at most ``MAX_QUANTITY_TEXT`` characters of input.
    """
    text = _quantity_text(value, field)
    if not _QUANTITY.fullmatch(text):
        raise ValidationError(field, f"{text!r} is not a valid Kubernetes quantity ({_EXAMPLES})")
    exponent = _EXPONENT.search(text)
    if exponent and len(exponent.group(1).lstrip("0")) > 3:
        raise ValidationError(field, f"{text!r} is out of range: an exponent has at most 3 digits")
    with decimal.localcontext(_EXACT):
        try:
            amount = Decimal(parse_quantity(text))
        except (ValueError, decimal.DecimalException):  # unreachable on matched text; kept as a guard
            raise ValidationError(field, f"{text!r} is not a valid Kubernetes quantity ({_EXAMPLES})") from None
        if abs(amount) * MILLIS_PER_UNIT > MAX_MILLIS:
            raise ValidationError(field, f"{text!r} is too large: at most {_max_text()}")
    if amount < 0 and not allow_negative:
        raise ValidationError(field, f"must not be negative, got {text!r}")
    return amount


def parse_millis(value: object, field: str = "quantity", *, allow_negative: bool = False) -> int:
    """Parse a Kubernetes quantity (``"500m"``, ``"2Gi"``, ``4``, ``0.5``) into integer millis,
    rounded up as Kubernetes rounds (``0.1m`` is ``1m``)."""
    amount = parse_quantity_decimal(value, field, allow_negative=allow_negative)
    with decimal.localcontext(_EXACT):
        return int((amount * MILLIS_PER_UNIT).to_integral_value(rounding=ROUND_CEILING))


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


def to_base_units(millis: int | float) -> int | float:
    """A JSON number in the resource's base unit (cores, bytes, GPUs): int when exact."""
    if isinstance(millis, int) and millis % MILLIS_PER_UNIT == 0:
        return millis // MILLIS_PER_UNIT
    return millis / MILLIS_PER_UNIT
