"""JSON parsing with a size limit.

DRF reads the request stream itself, so Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE`` never applies
to JSON bodies: without this parser a client could post any amount. The limit is the view's
``max_body_bytes`` or, failing that, ``DATA_UPLOAD_MAX_MEMORY_SIZE``.
"""

from __future__ import annotations

import io
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import BaseParser, JSONParser


def read_limited(stream: Any, parser_context: dict | None) -> bytes:
    """The body, or the documented 400 when it is larger than the view accepts."""
    context = parser_context or {}
    limit = getattr(context.get("view"), "max_body_bytes", None) or settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    raw = stream.read(limit + 1) if stream is not None else b""
    if len(raw) > limit:
        raise ValidationError(
            {"non_field_errors": [f"the request body is larger than the {limit} bytes this endpoint accepts"]}
        )
    return raw


class LimitedJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        raw = read_limited(stream, parser_context)
        try:
            return super().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None


class LimitedTextParser(BaseParser):
    """Any other body as text (YAML uploads): the importer parses it and reports its errors."""

    media_type = "*/*"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> str:
        return read_limited(stream, parser_context).decode("utf-8", errors="replace")
