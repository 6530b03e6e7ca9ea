"""Serializer pieces every app's API shares: finite floats, rounded decimals and the policy base."""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any, TypeVar

from django.db import models
from rest_framework import serializers
from rest_framework.validators import UniqueTogetherValidator, UniqueValidator

from queues.models import Surface
from queues.services.policy import QuotaRow, save_policy_object

_M = TypeVar("_M", bound=models.Model)


class FiniteFloatField(serializers.FloatField):
    """A float that may be infinite inside (a weight of 0 scores +infinity): null in JSON."""

    def to_representation(self, value: Any) -> float | None:  # type: ignore[override]  # the stubs say FloatField represents as str; DRF's returns a float
        number = float(value)
        return number if math.isfinite(number) else None


class RoundedDecimalField(serializers.DecimalField):
    """Weights and hours keep 4 (or 3) decimal places: more are rounded half-even, not refused (a
    schema can say "a number below 10**8", not "with at most 4 decimals"). The schema's maximum
    is where rounding would carry past ``max_digits`` (``fairportal.api.schema``)."""

    rounds_to_places = True

    def validate_precision(self, value: Decimal) -> Decimal:
        if self.decimal_places is not None:  # model DecimalFields always have it
            try:
                value = value.quantize(Decimal(1).scaleb(-self.decimal_places), rounding=ROUND_HALF_EVEN)
            except InvalidOperation:
                pass  # too many digits to round: the precision check below names the field
        return super().validate_precision(value)


class PolicySerializer(serializers.ModelSerializer[_M]):
    """Base of the policy objects' serializers: every write goes through ``save_policy_object``,
    which validates with the model's ``clean()`` (the one validation path, uniqueness included),
    writes in one transaction and audits the change with surface ``api``.

    Subclasses with quota rows set ``quotas_field`` and override ``build_quota_rows``; the service
    replaces the stored rows with the rows it returns.
    """

    quotas_field: str | None = None
    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.DecimalField: RoundedDecimalField,
    }

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        for field in fields.values():
            field.validators = [v for v in field.validators if not isinstance(v, UniqueValidator)]
        return fields

    def get_validators(self) -> list[Any]:
        return [v for v in super().get_validators() if not isinstance(v, UniqueTogetherValidator)]

    def build_quota_rows(self, instance: _M, data: Any) -> Sequence[QuotaRow]:
        """The unsaved quota rows (without their owner) that ``data``, the validated value of
        ``quotas_field``, describes for ``instance``."""
        raise NotImplementedError(f"{type(self).__name__} sets quotas_field but does not build quota rows")

    def create(self, validated_data: dict[str, Any]) -> _M:
        model: type[_M] = self.Meta.model
        return self._save(model(), validated_data)

    def update(self, instance: _M, validated_data: dict[str, Any]) -> _M:
        return self._save(instance, validated_data)

    def _save(self, instance: _M, validated_data: dict[str, Any]) -> _M:
        rows = None
        if self.quotas_field and self.quotas_field in validated_data:
            rows = self.build_quota_rows(instance, validated_data.pop(self.quotas_field))
        for name, value in validated_data.items():
            setattr(instance, name, value)
        request = self.context.get("request")
        return save_policy_object(
            instance,
            quotas=rows,
            quotas_field=self.quotas_field or "quotas",
            actor=getattr(request, "user", None),
            surface=Surface.API,
        )
