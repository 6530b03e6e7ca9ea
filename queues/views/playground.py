"""The hook for "try in playground first": a link from every policy form and queue page.

The playground issue adds the page. When a URL named ``PLAYGROUND_URL_NAME`` exists, forms and
detail pages show a "Try in playground first" link to it with the object to start from
(``?from=localqueue:12``); until then the link is simply not shown.
"""

from __future__ import annotations

from django.db import models
from django.urls import NoReverseMatch, reverse
from django.utils.http import urlencode

PLAYGROUND_URL_NAME = "playground"


def playground_url(obj: models.Model | None = None) -> str:
    """The playground page preloaded with ``obj`` (the live state when None), or '' while absent."""
    try:
        base = reverse(PLAYGROUND_URL_NAME)
    except NoReverseMatch:
        return ""
    if obj is None or obj.pk is None:
        return base
    return f"{base}?{urlencode({'from': f'{obj._meta.model_name}:{obj.pk}'})}"
