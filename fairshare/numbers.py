"""Plain numbers in scenario files and settings (weights, kValue, resource weights).

Python's ``float()`` reads more than a number a person writes: ``"1_000"``, Arabic-Indic or
full-width digits (``"١٢"``, ``"１２"``), ``"nan"``, ``"infinity"``. ``parse_number`` takes JSON/YAML
numbers, and text in the decimal syntax those formats use (ASCII digits, an optional sign, a
fraction, an exponent), and nothing else.
"""

from __future__ import annotations

import math
import re

from fairshare.errors import ValidationError

MAX_NUMBER_TEXT = 64
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?", re.ASCII)


def parse_number(value: object, field: str) -> float:
    """A finite float for ``value``; a ``ValidationError`` naming ``field`` (and at most 64
    characters of the input) for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValidationError(field, f"expected a number, got {type(value).__name__ if value is not None else 'null'}")
    if isinstance(value, str):
        if len(value) > MAX_NUMBER_TEXT or not _DECIMAL.fullmatch(value.strip()):
            raise ValidationError(field, f"expected a number, got {value[:MAX_NUMBER_TEXT]!r}")
        value = value.strip()
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float
        raise ValidationError(field, "must be a finite number") from None
    if not math.isfinite(number):
        raise ValidationError(field, f"must be a finite number, got {str(value)[:MAX_NUMBER_TEXT]!r}")
    return number
