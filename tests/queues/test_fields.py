"""The quantity form field: Kubernetes notation in the form, millis in the model."""

import pytest
from django.core.exceptions import ValidationError

from core.formatting import format_for_humans
from queues.fields import QuantityFormField


def test_given_notation_when_cleaned_then_millis():
    field = QuantityFormField()
    assert field.clean("2Gi") == 2147483648000
    assert field.clean("500m") == 500


def test_given_garbage_when_cleaned_then_error_says_what_is_wrong():
    with pytest.raises(ValidationError, match="not a valid Kubernetes quantity"):
        QuantityFormField().clean("lots")


def test_given_empty_optional_field_then_none():
    assert QuantityFormField(required=False).clean("") is None


def test_given_millis_when_displayed_then_notation_fits_the_resource():
    assert QuantityFormField(resource="memory").prepare_value(2147483648000) == "2Gi"
    assert QuantityFormField(resource="cpu").prepare_value(1500) == "1500m"
    assert format_for_humans(64 * 2**30 * 1000) == "64Gi"


@pytest.mark.parametrize(
    ("typed", "message"), [("1e999999", "out of range"), ("١٢", "not a valid"), ("1_000", "not a valid")]
)
def test_given_overflowing_or_non_kubernetes_numbers_when_cleaned_then_a_form_error(typed, message):
    with pytest.raises(ValidationError, match=message):
        QuantityFormField().clean(typed)
