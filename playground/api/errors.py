"""The API's answers to the what-if lane's cap and storage quotas, registered with the kernel's exception handler
(``core.api.exceptions``) by ``PlaygroundConfig.ready()``."""

from __future__ import annotations

from rest_framework import status
from rest_framework.response import Response

from core.api import exceptions
from playground.services.lane import StorageQuotaExceeded, WhatIfLimitReached


def whatif_limit_reached(exc: WhatIfLimitReached) -> Response:
    return Response(
        {"detail": str(exc), "code": "whatif_limit", "limit": exc.limit}, status=status.HTTP_429_TOO_MANY_REQUESTS
    )


def storage_quota_exceeded(exc: StorageQuotaExceeded) -> Response:
    return Response(
        {"detail": str(exc), "code": "storage_quota", "setting": exc.setting, "limit": exc.limit},
        status=status.HTTP_429_TOO_MANY_REQUESTS,
    )


def register() -> None:
    exceptions.register(WhatIfLimitReached, whatif_limit_reached)
    exceptions.register(StorageQuotaExceeded, storage_quota_exceeded)
