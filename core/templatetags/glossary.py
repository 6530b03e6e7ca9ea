"""``{% term "usage-score" %}``: a glossary term with its definition as hover and focus help.

Renders ``<dfn class="term" tabindex="0" data-definition="..." aria-describedby="gl-def-KEY">Label</dfn>``:
the label is focusable (Tab reaches it, the definition shows on focus as on hover, from
``data-definition`` through CSS; Escape hides it) and screen readers read the definition as its
description, from the hidden ``{% glossary_definitions %}`` block base.html writes once per page.
The definition is never part of the term's text, so a header or label reads as before.
``{% term "mode-usage" "UsageBased" %}`` shows other text for the same term. The definitions come
from ``core.glossary.TERMS`` only; an unknown key raises (a typo fails the page's tests).
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from core.glossary import TERMS, mode_key
from core.glossary import term as lookup

register = template.Library()


def definition_id(key: str) -> str:
    return f"gl-def-{key}"


@register.simple_tag
def term(key: str, text: str = "") -> SafeString:
    """``key``'s label (or ``text``) described by its definition."""
    item = lookup(key)
    return format_html(
        '<dfn class="term" tabindex="0" data-definition="{}" aria-describedby="{}">{}</dfn>',
        item.definition,
        definition_id(key),
        text or item.label,
    )


@register.simple_tag
def mode_term(mode: str, text: str = "") -> SafeString:
    """An admission mode's name with its definition (plain text for a name that is not a mode)."""
    key = mode_key(mode)
    if not key:
        return format_html("{}", text or mode)
    return term(key, text or mode)


@register.simple_tag
def glossary_definitions() -> SafeString:
    """Every definition once, hidden, as the targets of the terms' ``aria-describedby`` (a live
    refresh may bring terms the first render did not have, so all of them, not the ones used)."""
    return format_html(
        '<div hidden id="glossary-definitions">{}</div>',
        format_html_join("", '<span id="{}">{}</span>', ((definition_id(k), t.definition) for k, t in TERMS.items())),
    )
