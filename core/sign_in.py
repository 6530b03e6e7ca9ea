"""The sign-in page: Django's LoginView, plus the demo's logins as a hint while DEBUG is on."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.views import LoginView


class SignInView(LoginView):
    """Shows ``admin/admin``, ``alice/alice`` and ``bob/bob`` (``seed_demo``) only in DEBUG, the
    ``make run`` demo; a production deployment (DEBUG off) never advertises them."""

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs), "demo_logins": bool(settings.DEBUG)}
