"""API throttling whose rates are read from settings at each request (``API_THROTTLE_RATES``).

DRF's own classes copy the rates once, when the module is imported, so a deployment or a test
that changes the setting would not be heeded; these look them up every time. A rate of None
turns that throttle off.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework import throttling


class SettingsRateMixin:
    scope: str

    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_RATES.get(self.scope)

    def allow_request(self, request, view) -> bool:  # type: ignore[no-untyped-def]
        self.rate = self.get_rate()  # the rate may have changed since this object was made
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)  # type: ignore[misc]


class UserRateThrottle(SettingsRateMixin, throttling.UserRateThrottle):
    """Per signed-in user (anonymous callers fall back to their address)."""


class AnonRateThrottle(SettingsRateMixin, throttling.AnonRateThrottle):
    """Per address, for callers that are not signed in."""
