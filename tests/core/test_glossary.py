"""The glossary (core.glossary) is one source: the docs page is generated from it, every term a
template names exists, and the hover help is reachable without a mouse. One time format
(core.timefmt): 24-hour, the zone named, used by every template."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import UTC, datetime
from html import unescape
from pathlib import Path

import pytest
from django.conf import settings
from django.template import Context, Template
from django.test import override_settings

from core.glossary import TERMS, render_markdown
from core.timefmt import when

ROOT = Path(settings.BASE_DIR)
TEMPLATES = sorted((ROOT / "templates").rglob("*.html"))


def test_the_docs_page_is_what_the_command_it_names_prints():
    printed = subprocess.run(
        [sys.executable, "-m", "core.glossary"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert printed == render_markdown()
    assert (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8") == printed, (
        "docs/glossary.md is stale: run `python -m core.glossary > docs/glossary.md`"
    )


def test_every_term_a_template_names_is_in_the_glossary():
    used: dict[str, str] = {}
    for path in TEMPLATES:
        for key in re.findall(r'{%\s*term\s+"([^"]+)"', path.read_text(encoding="utf-8")):
            used[key] = str(path.relative_to(ROOT))
    assert used, "no template uses {% term %}"
    unknown = {key: where for key, where in used.items() if key not in TERMS}
    assert not unknown


def test_a_term_is_focusable_and_described_by_its_definition_which_is_not_part_of_its_text():
    html = Template('{% term "usage-score" %} and {% term "usage-score" "score" %}{% glossary_definitions %}').render(
        Context()
    )

    labels = re.findall(
        r'<dfn class="term" tabindex="0" data-definition="([^"]+)" aria-describedby="([^"]+)">([^<]+)</dfn>', html
    )
    assert [text for _, _, text in labels] == ["Usage score", "score"]
    definition = TERMS["usage-score"].definition
    for shown, described_by, _ in labels:
        assert unescape(shown) == definition  # what hover and focus show
        target = re.search(rf'<span id="{described_by}">([^<]+)</span>', html)
        assert target and unescape(target.group(1)) == definition  # what a screen reader reads
    assert html.count('id="gl-def-usage-score"') == 1  # one target per page, however often it is used
    assert re.search(r'<div hidden id="glossary-definitions">', html)


def test_an_unknown_term_fails_the_render_instead_of_showing_no_help():
    with pytest.raises(KeyError):
        Template('{% term "no-such-term" %}').render(Context())


def test_a_mode_name_gets_its_definition_and_anything_else_stays_plain_text():
    assert TERMS["mode-usage"].definition in unescape(
        Template('{% mode_term "UsageBasedAdmissionFairSharing" %}').render(Context())
    )
    assert Template("{% mode_term name %}").render(Context({"name": "<b>x</b>"})) == "&lt;b&gt;x&lt;/b&gt;"


def test_definitions_are_plain_sentences():
    for item in TERMS.values():
        assert "<" not in item.definition and item.definition.endswith("."), item.key
        assert len(item.definition) < 400, item.key


def test_a_moment_is_24_hour_with_its_zone_in_the_site_time_zone():
    afternoon = datetime(2026, 11, 28, 15, 4, 5, tzinfo=UTC)
    assert when(afternoon) == "2026-11-28 15:04 UTC"
    assert when(afternoon, seconds=True) == "2026-11-28 15:04:05 UTC"
    assert when(None) == ""
    with override_settings(TIME_ZONE="Europe/Berlin"):
        assert when(afternoon) == "2026-11-28 16:04 CET"
        assert Template("{{ at|when:'seconds' }}").render(Context({"at": afternoon})) == "2026-11-28 16:04:05 CET"


def test_no_template_writes_a_clock_time_but_through_when():
    """Django's |date with an hour (H, G, g, h, A, P) shows no zone: every time goes through |when."""
    offenders = []
    for path in TEMPLATES:
        for fmt in re.findall(r'\|date:["\']([^"\']*)["\']', path.read_text(encoding="utf-8")):
            if re.search(r"[HGghAP]", fmt):
                offenders.append(f"{path.relative_to(ROOT)}: {fmt}")
    assert not offenders
