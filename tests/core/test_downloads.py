"""Downloads: CSV cells a spreadsheet cannot execute, and file names that cannot break the header."""

from __future__ import annotations

import csv
import io

import pytest

from core.downloads import attachment, csv_text, neutralise_cell, safe_filename


@pytest.mark.parametrize("text", ["=1+2", "+1", "-2+3", "@SUM(A1)", "\t=cmd", "\r=cmd", '=HYPERLINK("http://x")'])
def test_given_text_a_spreadsheet_runs_as_a_formula_when_written_then_it_is_prefixed_with_an_apostrophe(text):
    assert neutralise_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["job-1", "team-a/main", "", -300, 2.5, 0])
def test_given_plain_text_or_numbers_when_written_then_unchanged(value):
    assert neutralise_cell(value) == value


def test_given_rows_when_exported_then_every_text_cell_is_neutralised_and_numbers_stay_numbers():
    text = csv_text(["workload", "delta", "state"], [{"workload": "=cmd|' /C calc'!A0", "delta": -300, "state": None}])

    rows = list(csv.reader(io.StringIO(text)))

    assert rows == [["workload", "delta", "state"], ["'=cmd|' /C calc'!A0", "-300", ""]]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("playground-run-7.json", "playground-run-7.json"),
        ('a"b\r\nSet-Cookie: x=1.yaml', "a-b-Set-Cookie-x-1.yaml"),
        ("../../etc/passwd", "etc-passwd"),
        ("Übersicht é.csv", "Ubersicht-e.csv"),
        ("...", "download"),
        ("x" * 500 + ".csv", "x" * 120),
    ],
)
def test_given_any_name_when_sanitised_then_only_safe_characters_remain(name, expected):
    assert safe_filename(name) == expected


def test_given_a_hostile_name_when_downloaded_then_the_header_is_one_quoted_attachment():
    response = attachment("x", 'evil"\r\nX-Injected: 1;.yaml', "application/yaml")

    header = response["Content-Disposition"]
    assert header == 'attachment; filename="evil-X-Injected-1-.yaml"'
    assert "\r" not in header and "\n" not in header
    assert response["Content-Type"] == "application/yaml; charset=utf-8"
