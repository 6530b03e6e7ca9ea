"""The API's answer to the what-if lane's cap, registered with the kernel's exception handler
(``core.api.exceptions``) by ``PlaygroundConfig.ready()``."""

from __future__ import annotations

from rest_framework import status
from rest_framework.response import Response

from core.api import exceptions
from playground.services.lane import WhatIfLimitReached


def whatif_limit_reached(exc: WhatIfLimitReached) -> Response:
    return Response(
        {"detail": str(exc), "code": "whatif_limit", "limit": exc.limit}, status=status.HTTP_429_TOO_MANY_REQUESTS
    )


def register() -> None:
    exceptions.register(WhatIfLimitReached, whatif_limit_reached)
