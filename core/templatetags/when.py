"""``{{ moment|when }}`` and ``{{ moment|when:"seconds" }}``: ``core.timefmt.when`` in templates."""

from __future__ import annotations

from datetime import date
from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from core.timefmt import when as format_when

register = template.Library()


@register.filter
def when(value: date | None, precision: str = "") -> str:
    """``2026-11-28 15:04 UTC`` (``precision="seconds"``: ``15:04:05``)."""
    return format_when(value, seconds=precision == "seconds")


@register.filter
def time_tag(value: Any, precision: str = "") -> SafeString | str:
    """``<time datetime="ISO">2026-11-28 15:04 UTC</time>``: the same text, machine-readable too."""
    if not value:
        return ""
    return format_html('<time datetime="{}">{}</time>', value.isoformat(), format_when(value, precision == "seconds"))
