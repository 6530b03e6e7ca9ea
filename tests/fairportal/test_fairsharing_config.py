"""Start-up validation of the fair-sharing configuration from the environment."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.fairsharing_config import FairSharingConfigError, load_policy

ROOT = Path(__file__).resolve().parents[2]


def test_given_no_variables_then_defaults():
    policy = load_policy({})
    assert policy.usage_half_life_seconds == 3600


def test_given_each_variable_then_it_is_applied():
    policy = load_policy(
        {
            "USAGE_HALF_LIFE_TIME": "30m",
            "USAGE_SAMPLING_INTERVAL": "1m",
            "RESOURCE_WEIGHTS": "cpu=1, nvidia.com/gpu=10",
            "RESET_INACTIVITY_PERIOD": "2d",
            "K_VALUE": "0.5",
            "USAGE_WINDOW": "1d,tumbling",
        }
    )
    assert policy.usage_half_life_seconds == 1800
    assert policy.usage_sampling_interval_seconds == 60
    assert dict(policy.resource_weights) == {"cpu": 1.0, "nvidia.com/gpu": 10.0}
    assert policy.reset_inactivity_seconds == 172800
    assert policy.k_value == 0.5
    assert (policy.usage_window.size_seconds, policy.usage_window.type) == (86400, "tumbling")


def test_given_json_resource_weights_then_accepted():
    assert load_policy({"RESOURCE_WEIGHTS": '{"memory": 0.1}'}).resource_weight("memory") == 0.1


def test_given_config_file_and_variable_then_variable_overrides_file(tmp_path):
    config = tmp_path / "fair.yaml"
    config.write_text("usageHalfLifeTime: 4h\nkValue: 2\n")
    policy = load_policy({"FAIR_SHARING_CONFIG": str(config), "K_VALUE": "3"})
    assert policy.usage_half_life_seconds == 4 * 3600
    assert policy.k_value == 3.0


@pytest.mark.parametrize(
    ("variable", "value", "fragment"),
    [
        ("USAGE_HALF_LIFE_TIME", "0s", "half-life of 0"),
        ("USAGE_SAMPLING_INTERVAL", "often", "not a duration"),
        ("RESOURCE_WEIGHTS", "cpu", "resource=weight"),
        ("RESOURCE_WEIGHTS", "cpu=-2", "must not be negative"),
        ("K_VALUE", "big", "expected a number"),
        ("USAGE_WINDOW", "7d,rolling", "sliding, tumbling"),
    ],
)
def test_given_bad_variable_then_error_names_it(variable, value, fragment):
    with pytest.raises(FairSharingConfigError) as error:
        load_policy({variable: value})
    assert str(error.value).startswith(variable)
    assert fragment in str(error.value)


def test_given_half_life_zero_when_django_starts_then_it_refuses_with_one_clear_line():
    env = {**os.environ, "USAGE_HALF_LIFE_TIME": "0s", "DJANGO_SETTINGS_MODULE": "fairportal.settings"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    assert "USAGE_HALF_LIFE_TIME (usageHalfLifeTime)" in result.stderr
    assert "must be greater than 0s" in result.stderr


def test_given_no_weights_configured_then_memory_weighs_about_one_core_per_gib():
    policy = load_policy({})
    gib_in_millis = 2**30 * 1000
    assert policy.resource_weight("memory") * gib_in_millis == pytest.approx(1073.7, rel=1e-3)
    assert policy.resource_weight("cpu") == 1.0


def test_given_weights_in_config_file_then_deployment_default_does_not_apply(tmp_path):
    config = tmp_path / "fair.yaml"
    config.write_text("resourceWeights: {cpu: 2}\n")
    assert load_policy({"FAIR_SHARING_CONFIG": str(config)}).resource_weight("memory") == 1.0
