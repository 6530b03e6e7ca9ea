"""Turn errors into API answers: bad input 400, conflicts 409, and whatever the apps register
(queues: a stop set by a higher level 403, an invalid transition 409, a reused key 422, an
unreachable cluster 503; the playground: too many what-if runs 429).

Whatever a service refuses becomes a JSON answer naming the field or the state; nothing
reaches the client as a 500.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError
from django.db.models import ProtectedError, RestrictedError
from rest_framework import status
from rest_framework.exceptions import ErrorDetail, ValidationError
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler

from core.errors import FieldErrors
from fairshare.errors import MAX_FIELD_CHARS, MAX_MESSAGE_CHARS, clip

Answer = Callable[[Any], Response]

# The apps' own error types and their answers (``register``), asked in the order registered,
# before the kernel's generic ones.
_ANSWERS: list[tuple[type[Exception], Answer]] = []


def register(error_type: type[Exception], answer: Answer) -> None:
    """Answer ``error_type`` (and its subclasses) with ``answer(exc)``; an app calls this from its
    AppConfig.ready() for the errors its services raise."""
    _ANSWERS[:] = [(known, given) for known, given in _ANSWERS if known is not error_type]
    _ANSWERS.append((error_type, answer))


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """The answer for ``exc``, every message in it clipped (errors quote what was sent)."""
    response = _answer(exc, context)
    if response is not None:
        response.data = _clipped(response.data)
    return response


def _clipped(data: Any) -> Any:
    if isinstance(data, ErrorDetail):
        return ErrorDetail(clip(str(data), MAX_MESSAGE_CHARS), code=data.code)
    if isinstance(data, str):
        return clip(data, MAX_MESSAGE_CHARS)
    if isinstance(data, dict):
        return {clip(str(key), MAX_FIELD_CHARS): _clipped(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_clipped(item) for item in data]
    return data


def _answer(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DjangoValidationError):
        exc = ValidationError(_rename_non_field_errors(as_serializer_error(exc)))
    else:
        for error_type, answer in _ANSWERS:
            if isinstance(exc, error_type):
                return answer(exc)
    if isinstance(exc, FieldErrors):
        exc = ValidationError(_rename_non_field_errors(exc.errors))
    elif isinstance(exc, (ProtectedError, RestrictedError)):
        return Response({"detail": _still_used(exc), "code": "protected"}, status=status.HTTP_409_CONFLICT)
    elif isinstance(exc, IntegrityError):
        # Validation ran first; this is a concurrent write that won the race (same name).
        return Response(
            {"detail": "conflicts with a concurrent change; read the current state and retry", "code": "conflict"},
            status=status.HTTP_409_CONFLICT,
        )
    return exception_handler(exc, context)


def _rename_non_field_errors(errors: dict[str, Any]) -> dict[str, Any]:
    key = api_settings.NON_FIELD_ERRORS_KEY
    return {key if name == "__all__" else name: value for name, value in errors.items()}


def _still_used(error: ProtectedError | RestrictedError) -> str:
    users = list(getattr(error, "protected_objects", None) or getattr(error, "restricted_objects", None) or [])
    shown = ", ".join(f"{type(obj)._meta.verbose_name} {obj}" for obj in users[:5])
    more = f" and {len(users) - 5} more" if len(users) > 5 else ""
    return f"cannot delete: still used by {shown}{more}; delete or move those first"
