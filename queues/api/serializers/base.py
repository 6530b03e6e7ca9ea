"""The base of every policy object's serializer (the queues objects', budgets'): writes go
through the queues policy service, audited with surface ``api``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from django.db import models
from rest_framework import serializers
from rest_framework.validators import UniqueTogetherValidator, UniqueValidator

from core.api.serializers import RoundedDecimalField
from core.models import Surface
from queues.services.policy import QuotaRow, save_policy_object

_M = TypeVar("_M", bound=models.Model)


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
