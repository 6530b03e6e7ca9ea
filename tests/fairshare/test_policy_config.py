"""The fair-sharing policy: defaults, camelCase parsing and field-naming validation."""

import pytest

from fairshare.durations import format_duration, parse_duration
from fairshare.errors import ValidationError
from fairshare.policy import FairSharingPolicy


def test_given_nothing_when_built_then_defaults_apply():
    policy = FairSharingPolicy.from_mapping(None)
    assert policy.usage_half_life_seconds == 3600
    assert policy.usage_sampling_interval_seconds == 300
    assert policy.resource_weight("nvidia.com/gpu") == 1.0
    assert policy.k_value == 1.0
    assert policy.usage_window.type == "sliding"


def test_given_full_mapping_when_built_then_every_field_is_read():
    policy = FairSharingPolicy.from_mapping(
        {
            "usageHalfLifeTime": "2h",
            "usageSamplingInterval": "1m",
            "resourceWeights": {"cpu": 1, "nvidia.com/gpu": 10},
            "resetInactivityPeriod": "7d",
            "kValue": 0.5,
            "usageWindow": {"size": "1d", "type": "tumbling"},
        }
    )
    assert policy.usage_half_life_seconds == 7200
    assert policy.usage_sampling_interval_seconds == 60
    assert policy.resource_weight("nvidia.com/gpu") == 10.0
    assert policy.reset_inactivity_seconds == 7 * 86400
    assert policy.k_value == 0.5
    assert (policy.usage_window.size_seconds, policy.usage_window.type) == (86400, "tumbling")
    assert FairSharingPolicy.from_mapping(policy.to_mapping()) == policy


def test_given_sampling_equal_to_half_life_then_sampling_alpha_is_one_half():
    policy = FairSharingPolicy.from_mapping({"usageHalfLifeTime": "5m", "usageSamplingInterval": "5m"})
    assert policy.sampling_alpha == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"usageHalfLifeTime": "0s"}, "policy.usageHalfLifeTime"),
        ({"usageHalfLifeTime": "soon"}, "policy.usageHalfLifeTime"),
        ({"usageSamplingInterval": 0}, "policy.usageSamplingInterval"),
        ({"resourceWeights": {"cpu": -1}}, "policy.resourceWeights.cpu"),
        ({"resourceWeights": {"bad name": 1}}, "policy.resourceWeights.bad name"),
        ({"kValue": "x"}, "policy.kValue"),
        ({"kValue": -0.1}, "policy.kValue"),
        ({"usageWindow": {"type": "rolling"}}, "policy.usageWindow.type"),
        ({"usageWindow": {"size": "0s"}}, "policy.usageWindow.size"),
        ({"halfLife": "1h"}, "policy.halfLife"),
    ],
)
def test_given_bad_value_when_built_then_error_names_the_field(data, field):
    with pytest.raises(ValidationError) as error:
        FairSharingPolicy.from_mapping(data)
    assert error.value.field == field


def test_given_half_life_of_zero_then_the_message_explains_why():
    with pytest.raises(ValidationError, match="half-life of 0"):
        FairSharingPolicy.from_mapping({"usageHalfLifeTime": "0s"})


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("5m", 300), ("2h", 7200), ("7d", 604800), ("1h30m", 5400), ("1.5h", 5400), (45, 45), ("0s", 0)],
)
def test_given_duration_strings_then_parsed_to_seconds(text, seconds):
    assert parse_duration(text) == seconds


def test_given_negative_duration_then_only_accepted_when_allowed():
    assert parse_duration("-10s", allow_negative=True) == -10
    with pytest.raises(ValidationError, match="must not be negative"):
        parse_duration("-10s", "createdAt")


@pytest.mark.parametrize("bad", ["", "5 minutes", "m5", "1x", None, True])
def test_given_bad_duration_then_rejected(bad):
    with pytest.raises(ValidationError):
        parse_duration(bad, "clock.tick")


def test_given_seconds_then_formatted_compactly():
    assert format_duration(5400) == "1h30m"
    assert format_duration(0) == "0s"
    assert format_duration(90061) == "1d1h1m1s"
