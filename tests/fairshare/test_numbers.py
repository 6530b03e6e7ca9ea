"""Plain numbers (weights, kValue, resource weights): what JSON/YAML and people write, nothing else."""

from __future__ import annotations

import pytest

from fairshare.errors import ValidationError
from fairshare.numbers import parse_number
from fairshare.policy import FairSharingPolicy
from fairshare.simulation.scenario import parse_scenario


@pytest.mark.parametrize(("value", "number"), [(2, 2.0), (0.5, 0.5), ("3", 3.0), ("1.5e2", 150.0), (" 4 ", 4.0)])
def test_given_a_number_when_parsed_then_a_float(value, number):
    assert parse_number(value, "weight") == number


@pytest.mark.parametrize("bad", ["١٢", "１２", "1_000", "nan", "infinity", "0x10", "1e99999", None, True, [1]])
def test_given_python_only_number_syntax_or_no_number_when_parsed_then_refused(bad):
    with pytest.raises(ValidationError) as error:
        parse_number(bad, "clusterQueues[0].weight")
    assert error.value.field == "clusterQueues[0].weight"


def test_given_a_scenario_weight_in_arabic_indic_digits_then_the_loader_names_the_field():
    document = {
        "resourceFlavors": [{"name": "default"}],
        "clusterQueues": [
            {"name": "cq", "weight": "١٢", "quotas": [{"flavor": "default", "resources": {"cpu": {"nominal": 4}}}]}
        ],
    }

    with pytest.raises(ValidationError, match=r"clusterQueues\[0\]\.weight: expected a number"):
        parse_scenario(document)


def test_given_a_resource_weight_with_digit_grouping_then_the_policy_refuses_it():
    with pytest.raises(ValidationError, match="expected a number"):
        FairSharingPolicy.from_mapping({"resourceWeights": {"cpu": "1_000"}})
