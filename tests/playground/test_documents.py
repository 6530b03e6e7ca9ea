"""Scenario documents: reading uploads, the playground's limits, edits naming the culprit."""

from __future__ import annotations

import pytest
import yaml

from fairshare.errors import ValidationError
from playground import documents
from playground.documents import EditError
from playground.presets import get_preset


def volcano() -> dict:
    return get_preset("volcano-16cpu").document()


def test_given_yaml_or_json_text_when_read_then_the_same_mapping_comes_back():
    document = volcano()
    as_yaml = documents.to_yaml(document)
    assert documents.read_text(as_yaml) == document
    assert documents.read_text(as_yaml.encode()) == document
    import json

    assert documents.read_text(json.dumps(document), "scenario.json") == document


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "document: is empty"),
        ("- a\n- b\n", "document: a scenario must be a mapping at the top level"),
        ("name: [unclosed", "document: not valid YAML/JSON"),
        (b"\xff\xfe", "document: is not UTF-8 text"),
    ],
)
def test_given_bad_text_when_read_then_the_error_names_the_document(content, message):
    with pytest.raises(ValidationError) as caught:
        documents.read_text(content)
    assert str(caught.value).startswith(message)


def test_given_a_document_over_the_size_limit_when_read_then_it_is_refused(monkeypatch):
    monkeypatch.setattr(documents, "MAX_DOCUMENT_BYTES", 100)
    with pytest.raises(ValidationError, match="document: is larger than"):
        documents.read_text("name: x\n" + "# padding\n" * 20)


def test_given_too_many_workloads_when_validated_then_the_limit_is_named(monkeypatch):
    monkeypatch.setattr(documents, "MAX_WORKLOADS", 10)
    with pytest.raises(ValidationError, match="workloads: at most 10 workloads in a run, got 27"):
        documents.validate(volcano())


def test_given_too_many_ticks_when_validated_then_the_tick_is_named():
    document = volcano()
    document["clock"] = {"horizon": "30d", "tick": "1s"}
    with pytest.raises(ValidationError, match=r"clock\.tick: at most [\d,]+ ticks"):
        documents.validate(document)


def test_given_valid_edits_when_applied_then_the_copy_changes_and_the_original_does_not():
    document = volcano()
    edited, scenario = documents.apply_edits(document, ["clusterQueues.q2.weight=3", "namespaces.ns4.weight=6"])
    assert {q.name: q.weight for q in scenario.cluster_queues} == {"q1": 1, "q2": 3}
    assert edited["namespaces"][3]["weight"] == 6
    assert document == volcano()


def test_given_an_edit_with_an_unknown_path_when_applied_then_the_error_names_that_edit():
    with pytest.raises(EditError) as caught:
        documents.apply_edits(volcano(), ["clusterQueues.q2.weight=3", "clusterQueues.nope.weight=2"])
    error = caught.value
    assert (error.field, error.path) == ("edits[1]", "clusterQueues.nope.weight")
    assert "no clusterQueues entry named 'nope'" in error.problem


def test_given_an_edit_that_makes_the_scenario_invalid_then_the_first_culprit_and_the_field_are_named():
    edits = ["namespaces.ns1.weight=2", "namespaces.ns2.weight=-1", "namespaces.ns3.weight=-2"]
    with pytest.raises(EditError) as caught:
        documents.apply_edits(volcano(), edits)
    assert caught.value.field == "edits[1]"
    assert caught.value.problem == "namespaces[1].weight: must be greater than 0, got -1"


def test_edits_typed_as_lines_drop_blanks_comments_and_the_set_flag():
    lines = ["", "  # try this", "--set policy.kValue=0", "namespaces.ns1.weight=2  "]
    assert documents.clean_edits(lines) == ["policy.kValue=0", "namespaces.ns1.weight=2"]


def test_to_yaml_keeps_the_written_order_and_loads_back():
    document = volcano()
    text = documents.to_yaml(document)
    assert text.startswith("name: volcano-16cpu\n")
    assert yaml.safe_load(text) == document
