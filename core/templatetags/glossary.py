"""``{% term "usage-score" %}``: a glossary term with its definition as hover and focus help.

Renders ``<span class="term"><dfn tabindex="0" aria-describedby=ID>Label</dfn><span role="tooltip"
id=ID>definition</span></span>``: the label is focusable (Tab reaches it, the tooltip shows on
focus as on hover, Escape hides it) and screen readers read the definition as its description.
``{% term "mode-usage" "UsageBased" %}`` shows other text for the same term. The definitions come
from ``core.glossary.TERMS`` only; an unknown key raises (a typo fails the page's tests).
"""

from __future__ import annotations

import secrets

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from core.glossary import mode_key
from core.glossary import term as lookup

register = template.Library()


@register.simple_tag
def term(key: str, text: str = "") -> SafeString:
    """``key``'s label (or ``text``) with its definition; ids are random, so a live refresh that
    swaps a fragment in never duplicates an id left elsewhere on the page."""
    item = lookup(key)
    tip_id = f"gl-{key}-{secrets.token_hex(3)}"
    return format_html(
        '<span class="term"><dfn tabindex="0" aria-describedby="{}">{}</dfn>'
        '<span class="term-tip" role="tooltip" id="{}">{}</span></span>',
        tip_id,
        text or item.label,
        tip_id,
        item.definition,
    )


@register.simple_tag
def mode_term(mode: str, text: str = "") -> SafeString:
    """An admission mode's name with its definition (plain text for a name that is not a mode)."""
    key = mode_key(mode)
    if not key:
        return format_html("{}", text or mode)
    return term(key, text or mode)


@register.simple_tag
def definition(key: str) -> str:
    """The definition alone (for a ``title`` or a help paragraph)."""
    return lookup(key).definition
