"""Serializer pieces every app's API shares: finite floats and rounded decimals."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

from rest_framework import serializers


class FiniteFloatField(serializers.FloatField):
    """A float that may be infinite inside (a weight of 0 scores +infinity): null in JSON."""

    def to_representation(self, value: Any) -> float | None:  # type: ignore[override]  # the stubs say FloatField represents as str; DRF's returns a float
        number = float(value)
        return number if math.isfinite(number) else None


class RoundedDecimalField(serializers.DecimalField):
    """Weights and hours keep 4 (or 3) decimal places: more are rounded half-even, not refused (a
    schema can say "a number below 10**8", not "with at most 4 decimals"). The schema's maximum
    is where rounding would carry past ``max_digits`` (``core.api.schema``)."""

    rounds_to_places = True

    def validate_precision(self, value: Decimal) -> Decimal:
        if self.decimal_places is not None:  # model DecimalFields always have it
            try:
                value = value.quantize(Decimal(1).scaleb(-self.decimal_places), rounding=ROUND_HALF_EVEN)
            except InvalidOperation:
                pass  # too many digits to round: the precision check below names the field
        return super().validate_precision(value)
