"""Quantity fields: Kubernetes notation at the edges, integer milli-units in the database.

``format_for_humans`` (the notation) is the kernel's ``core.formatting``, imported here for the fields."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db import models

from core.formatting import format_for_humans
from fairshare.errors import ValidationError as EngineValidationError
from fairshare.quantities import parse_millis


class QuantityFormField(forms.CharField):
    """Accepts ``500m``, ``2Gi``, ``4``; cleans to integer millis."""

    default_error_messages = {"invalid": "%(problem)s"}

    def __init__(self, *args: Any, resource: str = "", **kwargs: Any) -> None:
        kwargs.pop("max_length", None)
        kwargs.pop("min_value", None)
        kwargs.pop("max_value", None)
        kwargs.pop("step_size", None)
        super().__init__(*args, **kwargs)
        self.resource = resource
        self.widget.attrs.setdefault("placeholder", "e.g. 500m, 2Gi, 4")

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return format_for_humans(value, self.resource)
        return value

    def to_python(self, value: Any) -> int | None:  # type: ignore[override]  # milli-units for the integer column
        value = super().to_python(value)
        if value in self.empty_values:
            return None
        try:
            return parse_millis(value, "")
        except EngineValidationError as error:
            raise ValidationError(
                self.error_messages["invalid"], code="invalid", params={"problem": error.message}
            ) from error


class QuantityField(models.BigIntegerField):
    """An amount of a resource in milli-units (500m CPU = 500, 1Gi = 1073741824000)."""

    description = "Resource quantity in milli-units"

    def formfield(self, **kwargs: Any) -> forms.Field:
        """``QuantityFormField`` with a text input everywhere, the Django admin included: the admin
        gives integer columns a number input, in which a browser empties "1Ti" or "512Gi"."""
        widget = kwargs.get("widget")
        if isinstance(widget, forms.NumberInput) or (
            isinstance(widget, type) and issubclass(widget, forms.NumberInput)
        ):
            del kwargs["widget"]
        field = super().formfield(**{"form_class": QuantityFormField, **kwargs})
        assert field is not None  # a concrete, editable column always has a form field
        return field
