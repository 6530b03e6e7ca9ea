"""Content-Security-Policy: every page is sent one that refuses inline script and style, and no
template (or tag that writes HTML) carries inline script, an inline style attribute or an
``on...=`` handler that such a policy would refuse."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

from tests.factories import UserFactory

ROOT = Path(settings.BASE_DIR)
PAGES = [
    "/",
    "/queues/",
    "/queues/flavors/",
    "/workloads/",
    "/audit/",
    "/budgets/",
    "/playground/",
    "/accounts/login/",
    "/admin/",
    "/api/v1/",
    "/api/docs/",
    "/no-such-page/",
]


def directives(header: str) -> dict[str, list[str]]:
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


@pytest.mark.django_db
@pytest.mark.parametrize("path", PAGES)
def test_given_any_page_then_a_policy_without_inline_script_or_style_is_sent(client, path):
    client.force_login(UserFactory(username="csp-admin", is_staff=True, is_superuser=True))

    response = client.get(path)

    policy = directives(response["Content-Security-Policy"])
    for directive in ("script-src", "style-src"):
        assert policy[directive] == ["'self'"], (path, policy)
    assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"]


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)
INLINE_STYLE = re.compile(r"<style\b|\sstyle\s*=", re.IGNORECASE)
HANDLER = re.compile(r"\son[a-z]+\s*=\s*[\"']", re.IGNORECASE)


def sources() -> list[Path]:
    files = sorted((ROOT / "templates").rglob("*.html"))
    for app in ("queues", "budgets", "playground", "core", "fairportal"):
        files += sorted((ROOT / app).rglob("templatetags/*.py"))
        files += sorted((ROOT / app).rglob("templates/**/*.html"))
    return files


def test_no_template_carries_inline_script_style_or_handlers():
    offenders = []
    for path in sources():
        text = path.read_text(encoding="utf-8")
        for pattern in (INLINE_SCRIPT, INLINE_STYLE, HANDLER):
            for match in pattern.finditer(text):
                if 'type="application/json"' in match.group(0):
                    continue  # a data block (json_script), never executed
                offenders.append(f"{path.relative_to(ROOT)}: {match.group(0)[:60]}")
    assert len(sources()) > 20
    assert offenders == []
