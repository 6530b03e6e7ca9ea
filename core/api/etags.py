"""``ETag`` and ``If-Match`` for the API's policy objects (RFC 9110 sections 8.8.3, 13.1.1, 13.2).

- Every policy object's detail answer (GET, and the answer of a POST, PUT or PATCH) carries a
  strong ``ETag``: the object's version (``core.versions.version_of``), which any write of its
  stored policy changes, whichever surface made it, and a control loop pass does not.
- A PUT, PATCH or DELETE with ``If-Match`` is performed only when the object's current ETag is
  one of those listed (strong comparison: a weak ``W/"..."`` tag never matches), or when the
  header is ``*`` (the object exists). The comparison runs inside the write's transaction with
  the row locked (``core.versions.lock_current``): two writers sending the same ETag cannot both
  pass. A stale write is a **412** naming who last changed the object, when and which fields.
- Without ``If-Match`` a write is unconditional, as it always was; with the setting
  ``API_REQUIRE_IF_MATCH`` (default off) it is a **428**. An ``If-Match`` that is not a list of
  entity tags is a **400** naming the header (never read as "no condition").
- Preconditions are evaluated after the usual checks, before the body is: an unknown or
  another tenant's object is still a 404, a write the role may not make still a 403.
- ``If-None-Match`` is not evaluated: the ETag versions the policy, not the live ``status`` and
  counts an answer also carries, so a 304 could hand back a stale status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.schema import ValidatedAutoSchema
from core.versions import StaleVersion

IF_MATCH_MAX_CHARS = 1024
WRITE_METHODS = frozenset({"PUT", "PATCH", "DELETE"})
# RFC 9110 8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE; etagc = %x21 / %x23-7E / obs-text.
_ENTITY_TAG = r'(W/)?"[\x21\x23-\x7e\x80-\xff]*"'
_ENTITY_TAG_LIST = re.compile(rf"{_ENTITY_TAG}([ \t]*,[ \t]*{_ENTITY_TAG})*")
_ONE_TAG = re.compile(r'(?P<weak>W/)?"(?P<opaque>[\x21\x23-\x7e\x80-\xff]*)"')
# What the schema promises (ECMA-262, printable ASCII): the parser also takes obs-text and tabs.
IF_MATCH_PATTERN = r'^(\*|(W/)?"[!#-~]*"( *, *(W/)?"[!#-~]*")*)$'


def etag(version: str) -> str:
    """The ``ETag`` header value of a version: a strong entity tag."""
    return f'"{version}"'


@dataclass(frozen=True)
class IfMatch:
    """A parsed ``If-Match``: ``*`` or the strong tags it lists (weak ones can never match)."""

    any: bool
    strong: frozenset[str]

    def matches(self, version: str) -> bool:
        return self.any or version in self.strong


def if_match(request: Request) -> IfMatch | None:
    """The request's ``If-Match`` (None: absent); a 400 naming the header when it is malformed,
    a 428 when it is absent and ``API_REQUIRE_IF_MATCH`` is on."""
    raw = request.headers.get("If-Match")
    if raw is None:
        if getattr(settings, "API_REQUIRE_IF_MATCH", False):
            raise PreconditionRequired()
        return None
    if len(raw) > IF_MATCH_MAX_CHARS:
        raise ValidationError({"If-Match": [f"longer than {IF_MATCH_MAX_CHARS} characters"]})
    text = raw.strip(" \t")
    if text == "*":
        return IfMatch(any=True, strong=frozenset())
    if not _ENTITY_TAG_LIST.fullmatch(text):
        raise ValidationError(
            {"If-Match": ['not "*" or a list of entity tags: send the ETag a GET answered, quotes included']}
        )
    tags = _ONE_TAG.finditer(text)
    return IfMatch(any=False, strong=frozenset(m.group("opaque") for m in tags if not m.group("weak")))


class PreconditionRequired(Exception):
    """A write without ``If-Match`` where the deployment requires one."""


def precondition_failed(error: StaleVersion) -> Response:
    """The 412: what changed, by whom and when (as the viewer may read it), nothing else."""
    body: dict[str, Any] = {
        "code": "precondition_failed",
        "detail": f"{error.sentence()}. Nothing was changed: GET it again for its current ETag, "
        "apply your change to that, and send it with that ETag.",
        "last_change": error.change.as_dict() if error.change is not None else None,
    }
    return Response(body, status=412)


def precondition_required() -> Response:
    return Response(
        {
            "code": "precondition_required",
            "detail": "this server requires If-Match on PUT, PATCH and DELETE of policy objects: "
            "GET the object and send its ETag",
        },
        status=428,
    )


# -- OpenAPI ---------------------------------------------------------------------------------------

ETAG_HEADER = OpenApiParameter(
    "ETag",
    {"type": "string", "pattern": '^"[0-9a-f]{32}"$'},
    OpenApiParameter.HEADER,
    required=True,
    description="The object's version, a strong entity tag: send it back in If-Match to write "
    "only if nobody changed the object since (status and counts are not part of it)",
    response=[200, 201],
)
IF_MATCH_HEADER = OpenApiParameter(
    "If-Match",
    {"type": "string", "pattern": IF_MATCH_PATTERN, "minLength": 1, "maxLength": IF_MATCH_MAX_CHARS},
    OpenApiParameter.HEADER,
    description='Write only if the object\'s current ETag is one of these ("*": if it exists); '
    "else 412 and nothing changes. Without it the write is unconditional, unless the server "
    "requires it (API_REQUIRE_IF_MATCH: 428).",
)
PRECONDITION_FAILED = OpenApiResponse(
    {
        "type": "object",
        "properties": {
            "code": {"type": "string", "enum": ["precondition_failed"]},
            "detail": {"type": "string"},
            "last_change": {
                "type": "object",
                "nullable": True,
                "description": "The object's latest audit row (null: none recorded)",
                "properties": {
                    "actor": {"type": "string", "description": 'User name; "the system" for the control loop'},
                    "surface": {"type": "string"},
                    "action": {"type": "string", "enum": ["create", "update"]},
                    "at": {"type": "string", "format": "date-time"},
                    "changed_fields": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["actor", "surface", "action", "at", "changed_fields"],
            },
        },
        "required": ["code", "detail", "last_change"],
    },
    description="If-Match names another version: the object changed since it was read; nothing was changed",
)
PRECONDITION_REQUIRED = OpenApiResponse(
    {
        "type": "object",
        "properties": {"code": {"type": "string", "enum": ["precondition_required"]}, "detail": {"type": "string"}},
        "required": ["code", "detail"],
    },
    description="No If-Match, and the server requires one (API_REQUIRE_IF_MATCH)",
)


class PolicyObjectSchema(ValidatedAutoSchema):
    """The policy viewsets' schema: ``ETag`` on detail answers, ``If-Match`` on PUT, PATCH and
    DELETE with their 412 and 428 answers."""

    def _detail_write(self) -> bool:
        return self.method in WRITE_METHODS

    def get_override_parameters(self) -> list[Any]:
        parameters = list(super().get_override_parameters())
        if self._detail_write():
            parameters.append(IF_MATCH_HEADER)
        if self.method in {"GET", "POST", "PUT", "PATCH"} and not self._is_list_view():
            parameters.append(ETAG_HEADER)
        return parameters

    def get_response_serializers(self) -> Any:
        responses = super().get_response_serializers()
        if not self._detail_write() or isinstance(responses, dict):
            return responses
        code = 204 if self.method == "DELETE" else 200
        return {code: None if code == 204 else responses, 412: PRECONDITION_FAILED, 428: PRECONDITION_REQUIRED}
