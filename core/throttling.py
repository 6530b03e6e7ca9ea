"""API throttling whose rates are read from settings at each request (``API_THROTTLE_RATES``).

DRF's own classes copy the rates once, when the module is imported, so a deployment or a test
that changes the setting would not be heeded; these look them up every time. A rate of None
turns that throttle off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from rest_framework import throttling

if TYPE_CHECKING:  # DRF loads this module while rest_framework.views is still importing
    from rest_framework.request import Request
    from rest_framework.views import APIView


class SettingsRateMixin(throttling.SimpleRateThrottle):
    def get_rate(self) -> str | None:
        if self.scope is None:
            return None
        return settings.API_THROTTLE_RATES.get(self.scope)

    def allow_request(self, request: Request, view: APIView) -> bool:
        self.rate = self.get_rate()  # the rate may have changed since this object was made
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)


class UserRateThrottle(SettingsRateMixin, throttling.UserRateThrottle):
    """Per signed-in user (anonymous callers fall back to their address)."""


class AnonRateThrottle(SettingsRateMixin, throttling.AnonRateThrottle):
    """Per address, for callers that are not signed in."""
