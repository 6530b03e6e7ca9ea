"""Quantities: Kubernetes notation in and out, exact integer milli-units inside."""

import pytest

from fairshare.errors import ValidationError
from fairshare.quantities import (
    format_quantity,
    parse_millis,
    parse_resource_list,
    to_base_units,
    validate_resource_name,
)


@pytest.mark.parametrize(
    ("text", "resource", "millis", "formatted"),
    [
        ("0.5", "cpu", 500, "500m"),
        ("500m", "cpu", 500, "500m"),
        ("1Gi", "memory", 1073741824000, "1Gi"),
        ("1e3", "cpu", 1_000_000, "1k"),
        ("4", "nvidia.com/gpu", 4000, "4"),
        ("2Gi", "memory", 2147483648000, "2Gi"),
        ("1536Mi", "memory", 1610612736000, "1536Mi"),
        ("100M", "memory", 100_000_000_000, "100000000"),
        ("0", "cpu", 0, "0"),
    ],
)
def test_given_kubernetes_notation_when_parsed_and_formatted_then_round_trips(text, resource, millis, formatted):
    assert parse_millis(text) == millis
    assert format_quantity(millis, resource) == formatted
    assert parse_millis(format_quantity(millis, resource)) == millis


def test_given_numbers_when_parsed_then_accepted_like_strings():
    assert parse_millis(2) == 2000
    assert parse_millis(0.25) == 250


def test_given_sub_milli_precision_when_parsed_then_rounded_up_like_kubernetes():
    assert parse_millis("0.0001") == 1


@pytest.mark.parametrize("bad", ["abc", "1.2.3", "", "  ", "5 cores", "Gi", "1GB"])
def test_given_invalid_string_when_parsed_then_error_names_the_field(bad):
    with pytest.raises(ValidationError) as error:
        parse_millis(bad, "requests.cpu")
    assert str(error.value).startswith("requests.cpu: ")


@pytest.mark.parametrize("bad", [None, True, float("nan"), float("inf")])
def test_given_non_quantity_values_when_parsed_then_rejected(bad):
    with pytest.raises(ValidationError):
        parse_millis(bad, "q")


def test_given_negative_quantity_when_parsed_then_rejected_unless_allowed():
    with pytest.raises(ValidationError, match="must not be negative"):
        parse_millis("-1", "nominal")
    assert parse_millis("-1", allow_negative=True) == -1000


def test_given_resource_list_when_parsed_then_each_entry_named_on_error():
    assert parse_resource_list({"cpu": "2", "nvidia.com/gpu": 1}) == {"cpu": 2000, "nvidia.com/gpu": 1000}
    with pytest.raises(ValidationError, match=r"^resources\.memory: "):
        parse_resource_list({"cpu": "1", "memory": "lots"})


@pytest.mark.parametrize("name", ["cpu", "memory", "nvidia.com/gpu", "example.com/foo-bar", "hugepages-2Mi"])
def test_given_kubernetes_resource_names_then_valid(name):
    assert validate_resource_name(name) == name


@pytest.mark.parametrize("name", ["", "bad name", "/gpu", "a/b/c", "-cpu", 3])
def test_given_invalid_resource_names_then_rejected(name):
    with pytest.raises(ValidationError, match="not a valid resource name"):
        validate_resource_name(name, "resource")


def test_given_millis_when_converted_to_base_units_then_int_when_exact():
    assert to_base_units(4000) == 4
    assert isinstance(to_base_units(4000), int)
    assert to_base_units(500) == 0.5


# -- only Kubernetes' own quantity syntax, bounded (issue 13) ------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "١٢",  # Arabic-Indic digits: Python's Decimal reads them as 12
        "１２",  # full-width digits
        "1_000",  # Python's digit grouping
        " 4",  # surrounding space
        "4 ",
        "Infinity",
        "NaN",
        "1K",  # Kubernetes' kilo is a lower-case k
        "1ki",
        "0x10",
    ],
)
def test_given_python_number_syntax_that_kubernetes_refuses_when_parsed_then_refused(bad):
    with pytest.raises(ValidationError, match="not a valid Kubernetes quantity"):
        parse_millis(bad, "requests.cpu")


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("1e999999", "exponent has at most 3 digits"),  # decimal.Overflow before
        ("1e999999k", "not a valid Kubernetes quantity"),  # an exponent and a suffix
        ("1e-9999999", "exponent has at most 3 digits"),
        ("9E", "too large"),  # 9 * 10**18 base units does not fit a BIGINT of millis
        ("1e300", "too large"),
        ("9223372036854775808m", "too large"),
        (1e300, "too large"),
        (10**30, "too large"),
        (float("inf"), "not a finite quantity"),
        ("1" * 65, "at most 64 characters"),
    ],
)
def test_given_an_amount_beyond_the_bound_when_parsed_then_a_field_error_not_an_exception(bad, message):
    with pytest.raises(ValidationError, match=message) as error:
        parse_millis(bad, "requests.cpu")
    assert error.value.field == "requests.cpu"


@pytest.mark.parametrize(
    ("text", "millis"),
    [
        ("9223372036854775807m", 2**63 - 1),  # the bound itself
        ("+1", 1000),
        (".5", 500),
        ("5.", 5000),
        ("1E3", 1_000_000),  # exponent, not exa
        ("1E", None),  # exa: too large for a BIGINT of millis
        ("100n", 1),  # nano, rounded up to 1m
        ("1e-999", 1),
        (1.5e-07, 1),
    ],
)
def test_given_the_whole_kubernetes_grammar_when_parsed_then_exact(text, millis):
    if millis is None:
        with pytest.raises(ValidationError, match="too large"):
            parse_millis(text)
    else:
        assert parse_millis(text) == millis


def test_given_more_digits_than_decimal_precision_when_parsed_then_still_rounded_up_exactly():
    # 32 significant digits: the default 28-digit context would round this to exactly 1 core.
    assert parse_millis("1.0000000000000000000000000000001") == 1001


def test_given_a_non_quantity_value_when_parsed_then_the_error_names_its_type_not_its_content():
    with pytest.raises(ValidationError, match="got list"):
        parse_millis(["x" * 10_000], "cpu")
