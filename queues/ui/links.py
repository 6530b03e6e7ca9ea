"""The "try in playground first" link of every policy form and queue page.

Forms and detail pages link to the playground page (the URL named ``PLAYGROUND_URL_NAME``,
reversed by name so queues imports nothing of the playground app) with the object to start
from (``?from=localqueue:12``).
"""

from __future__ import annotations

from django.db import models
from django.urls import reverse
from django.utils.http import urlencode

PLAYGROUND_URL_NAME = "playground:index"


def playground_url(obj: models.Model | None = None) -> str:
    """The playground page preloaded with ``obj`` (the live state when None)."""
    base = reverse(PLAYGROUND_URL_NAME)
    if obj is None or obj.pk is None:
        return base
    return f"{base}?{urlencode({'from': f'{obj._meta.model_name}:{obj.pk}'})}"
