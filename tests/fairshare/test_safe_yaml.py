"""The one YAML reader for user input: anchors and aliases refused, size and depth bounded; errors
clipped. Pure engine tests (no database)."""

from __future__ import annotations

import time

import pytest
import yaml

from fairshare import safe_yaml
from fairshare.errors import MAX_MESSAGE_CHARS, ValidationError
from fairshare.simulation.scenario import apply_set, load_document, parse_scenario
from tests.hostile import alias_bomb


def test_given_an_alias_bomb_when_loaded_then_it_is_refused_at_once_naming_the_line():
    started = time.perf_counter()
    with pytest.raises(safe_yaml.YAMLRefused) as refused:
        safe_yaml.load(alias_bomb(flow=False))
    assert time.perf_counter() - started < 0.5
    assert str(refused.value) == "YAML anchors and aliases (&name, *name, <<: *name) are not allowed (line 1, column 5)"


@pytest.mark.parametrize(
    "text",
    ["a: &x 1\n", "a: 1\nb: *x\n", "base: &b {cpu: 1}\nother:\n  <<: *b\n"],
    ids=["anchor-alone", "alias-alone", "merge-key"],
)
def test_given_any_anchor_or_alias_then_refused(text):
    with pytest.raises(yaml.YAMLError, match="anchors and aliases"):
        safe_yaml.load(text)


def test_given_deep_nesting_or_too_many_bytes_then_refused():
    with pytest.raises(safe_yaml.YAMLRefused, match="nested deeper than 64 levels"):
        safe_yaml.load("[" * 10_000 + "]" * 10_000)
    with pytest.raises(safe_yaml.YAMLRefused, match="at most 10 are accepted"):
        safe_yaml.load("name: twelve chars", max_bytes=10)


def test_given_plain_documents_then_they_load_as_safe_load_does():
    text = "name: x\nlist: [1, {b: c}]\n---\nsecond: true\n"
    assert safe_yaml.load_all(text) == list(yaml.safe_load_all(text))
    assert safe_yaml.load('{"json": [1, 2]}') == {"json": [1, 2]}


def test_given_a_scenario_file_with_aliases_then_the_error_names_the_file(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text("name: bomb\n" + alias_bomb(flow=False))
    with pytest.raises(ValidationError) as error:
        load_document(path)
    assert error.value.field == str(path)
    assert "anchors and aliases" in error.value.message


def test_given_a_set_value_with_aliases_then_the_edit_is_refused_not_kept_as_text():
    document = {"name": "x", "policy": {}}
    with pytest.raises(ValidationError) as error:
        apply_set(document, f"policy.resourceWeights.cpu={alias_bomb()}")
    assert error.value.field == "--set policy.resourceWeights.cpu"
    assert "anchors and aliases" in error.value.message
    assert document == {"name": "x", "policy": {}}


def test_given_a_huge_bad_value_then_the_error_quotes_only_its_beginning():
    huge_name = "x" * 1_000_000
    with pytest.raises(ValidationError) as error:
        parse_scenario({"name": "x", "clusterQueues": [{"name": huge_name + " y"}]})
    assert len(str(error.value)) < MAX_MESSAGE_CHARS + 250
    assert "chars)" in error.value.message
