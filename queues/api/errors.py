"""The API's answers to the queues services' errors, registered with the kernel's exception
handler (``core.api.exceptions``) by ``QueuesConfig.ready()``."""

from __future__ import annotations

from rest_framework import status
from rest_framework.response import Response

from core.api import exceptions
from queues.backends import BackendUnavailable
from queues.models import Workload
from queues.services.errors import IdempotencyKeyReused, InvalidTransition, StillUsed, StopLocked


def stop_locked(exc: StopLocked) -> Response:
    return Response({"detail": f"stop_policy: {exc.message}", "code": "stop_locked"}, status=status.HTTP_403_FORBIDDEN)


def invalid_transition(exc: InvalidTransition) -> Response:
    return Response(
        {"detail": str(exc), "code": "invalid_transition", "state": exc.state}, status=status.HTTP_409_CONFLICT
    )


def idempotency_key_reused(exc: IdempotencyKeyReused) -> Response:
    return Response({"detail": str(exc), "code": "idempotency_key_reused"}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)


def still_used(exc: StillUsed) -> Response:
    """A delete refused while rows (admitted work among them) still refer to the object."""
    return Response({"detail": exc.message, "code": "protected"}, status=status.HTTP_409_CONFLICT)


def backend_unavailable(exc: BackendUnavailable) -> Response:
    return Response(
        {
            "detail": f"the cluster did not answer; nothing was submitted, retry later ({str(exc)[:200]})",
            "code": "cluster_unavailable",
        },
        status=status.HTTP_503_SERVICE_UNAVAILABLE,
    )


def workload_not_found(exc: Workload.DoesNotExist) -> Response:
    return Response({"detail": "No Workload matches the given query."}, status=status.HTTP_404_NOT_FOUND)


def register() -> None:
    # StopLocked is a FieldErrors: registered answers come before the kernel's 400 for those
    exceptions.register(StopLocked, stop_locked)
    exceptions.register(InvalidTransition, invalid_transition)
    exceptions.register(IdempotencyKeyReused, idempotency_key_reused)
    exceptions.register(StillUsed, still_used)
    exceptions.register(BackendUnavailable, backend_unavailable)
    exceptions.register(Workload.DoesNotExist, workload_not_found)
