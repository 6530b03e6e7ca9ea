"""Durations: 90s, 5m, 2h, 7d, 1h30m; ASCII digits only and bounded (no overflow on huge input)."""

from __future__ import annotations

import pytest

from fairshare.durations import parse_duration
from fairshare.errors import ValidationError


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("1h30m", 5400), ("7d", 604800), ("5", 5), (2.5, 2)])
def test_given_a_duration_when_parsed_then_whole_seconds(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("١h", "is not a duration"),  # Arabic-Indic digit: float() would read it as 1
        ("１２s", "is not a duration"),
        ("9" * 400, "at most 32 characters"),  # float() gives inf, int(round(inf)) raised OverflowError
        ("9" * 30 + "d", "out of range"),
        (1e300, "out of range"),
    ],
)
def test_given_a_bad_or_huge_duration_when_parsed_then_a_field_error(bad, message):
    with pytest.raises(ValidationError, match=message) as error:
        parse_duration(bad, "clock.horizon")
    assert error.value.field == "clock.horizon"
