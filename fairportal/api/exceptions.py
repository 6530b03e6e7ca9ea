"""Turn domain errors into API answers: bad input 400, a stop set by a higher level 403, conflicts
409, a reused key 422, an unreachable cluster 503.

Whatever a service refuses becomes a JSON answer naming the field or the state; nothing
reaches the client as a 500.
"""

from __future__ import annotations

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

from fairportal.whatif import WhatIfLimitReached
from fairshare.errors import MAX_FIELD_CHARS, MAX_MESSAGE_CHARS, clip
from queues.backends import BackendUnavailable
from queues.models import Workload
from queues.services.errors import FieldErrors, IdempotencyKeyReused, InvalidTransition, StopLocked


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
    elif isinstance(exc, StopLocked):
        return Response(
            {"detail": f"stop_policy: {exc.message}", "code": "stop_locked"}, status=status.HTTP_403_FORBIDDEN
        )
    elif isinstance(exc, FieldErrors):
        exc = ValidationError(_rename_non_field_errors(exc.errors))
    elif isinstance(exc, InvalidTransition):
        return Response(
            {"detail": str(exc), "code": "invalid_transition", "state": exc.state}, status=status.HTTP_409_CONFLICT
        )
    elif isinstance(exc, IdempotencyKeyReused):
        return Response(
            {"detail": str(exc), "code": "idempotency_key_reused"}, status=status.HTTP_422_UNPROCESSABLE_ENTITY
        )
    elif isinstance(exc, (ProtectedError, RestrictedError)):
        return Response({"detail": _still_used(exc), "code": "protected"}, status=status.HTTP_409_CONFLICT)
    elif isinstance(exc, IntegrityError):
        # Validation ran first; this is a concurrent write that won the race (same name).
        return Response(
            {"detail": "conflicts with a concurrent change; read the current state and retry", "code": "conflict"},
            status=status.HTTP_409_CONFLICT,
        )
    elif isinstance(exc, BackendUnavailable):
        return Response(
            {"detail": f"the cluster did not answer; nothing was submitted, retry later ({str(exc)[:200]})",
             "code": "cluster_unavailable"},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
        )
    elif isinstance(exc, WhatIfLimitReached):
        return Response(
            {"detail": str(exc), "code": "whatif_limit", "limit": exc.limit}, status=status.HTTP_429_TOO_MANY_REQUESTS
        )
    elif isinstance(exc, Workload.DoesNotExist):
        return Response({"detail": "No Workload matches the given query."}, status=status.HTTP_404_NOT_FOUND)
    return exception_handler(exc, context)


def _rename_non_field_errors(errors: dict[str, Any]) -> dict[str, Any]:
    key = api_settings.NON_FIELD_ERRORS_KEY
    return {key if name == "__all__" else name: value for name, value in errors.items()}


def _still_used(error: ProtectedError | RestrictedError) -> str:
    users = list(getattr(error, "protected_objects", None) or getattr(error, "restricted_objects", None) or [])
    shown = ", ".join(f"{type(obj)._meta.verbose_name} {obj}" for obj in users[:5])
    more = f" and {len(users) - 5} more" if len(users) > 5 else ""
    return f"cannot delete: still used by {shown}{more}; delete or move those first"
