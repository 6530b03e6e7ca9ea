"""``X-Request-ID`` on every request and response, bound for the logs (``core.log_context``).

An incoming id is kept when it is short and safe (a proxy's or a client's), otherwise a new one
is made; the response carries it back. With ``REQUEST_LOG`` (the default under
``LOG_FORMAT=json``) each request also writes one line on the ``fairportal.request`` logger:
method, path, status and duration, so the JSON log has the access log with the request id.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

from core.log_context import HEADER, accept_request_id, bind_request_id, unbind_request_id

logger = logging.getLogger("fairportal.request")


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        request_id = accept_request_id(request.headers.get(HEADER))
        request.request_id = request_id  # type: ignore[attr-defined]
        token = bind_request_id(request_id)
        started = time.monotonic()
        try:
            response = self.get_response(request)
            response[HEADER] = request_id
            if getattr(settings, "REQUEST_LOG", False):
                logger.info(
                    "%s %s %s",
                    request.method,
                    request.path,
                    response.status_code,
                    extra={
                        "method": request.method,
                        "path": request.path,
                        "status": response.status_code,
                        "duration_ms": round((time.monotonic() - started) * 1000, 1),
                    },
                )
            return response
        finally:
            unbind_request_id(token)
