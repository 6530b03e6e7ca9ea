"""Request bodies with a size limit: the view's ``max_body_bytes`` (else
``DATA_UPLOAD_MAX_MEMORY_SIZE``), refused with the documented JSON 400.

The parsers read at most the limit (plus one byte) from the request stream. They are not
subclasses of DRF's ``JSONParser`` on purpose: DRF reads the whole body into memory for those
first, and Django then refuses anything over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` with its HTML 400
page, whatever the view allows.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import BaseParser, JSONParser


def read_limited(stream: IO[Any] | None, parser_context: Mapping[str, Any] | None) -> bytes:
    """The body, or the documented 400 when it is larger than the view accepts."""
    context = parser_context or {}
    limit = getattr(context.get("view"), "max_body_bytes", None) or settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    raw = stream.read(limit + 1) if stream is not None else b""
    if len(raw) > limit:
        raise ValidationError(
            {"non_field_errors": [f"the request body is larger than the {limit} bytes this endpoint accepts"]}
        )
    return raw


class LimitedJSONParser(BaseParser):
    """DRF's JSON parsing (delegated) of a body read within the limit."""

    media_type = JSONParser.media_type
    renderer_class = JSONParser.renderer_class

    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        raw = read_limited(stream, parser_context)
        try:
            return JSONParser().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None


class LimitedTextParser(BaseParser):
    """Any other body as text (YAML uploads): the importer parses it and reports its errors."""

    media_type = "*/*"

    def parse(  # type: ignore[override]  # request.data is whatever the parser returns; the stubs allow mappings only
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> str:
        return read_limited(stream, parser_context).decode("utf-8", errors="replace")
