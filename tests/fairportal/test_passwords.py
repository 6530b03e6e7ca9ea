"""Django's password validators are active: short, common, numeric and name-like passwords fail."""

import pytest
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError

from tests.factories import UserFactory


@pytest.mark.parametrize("password", ["admin", "password123", "12345678901234", "alice-smith-1"])
@pytest.mark.django_db
def test_given_a_weak_password_then_it_is_refused(password):
    user = UserFactory.build(username="alice-smith", email="alice@example.org")
    with pytest.raises(ValidationError):
        validate_password(password, user)


def test_given_a_long_random_password_then_it_passes():
    validate_password("correct-horse-battery-staple-42")
