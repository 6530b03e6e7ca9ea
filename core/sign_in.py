"""The sign-in page: Django's LoginView (local and LDAP passwords), a "Sign in with <provider>"
button when OpenID Connect is configured, and the demo's logins as a hint while DEBUG is on."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.views import LoginView


class SignInView(LoginView):
    """Shows ``admin/admin``, ``alice/alice`` and ``bob/bob`` (``seed_demo``) only in DEBUG, the
    ``make run`` demo; a production deployment (DEBUG off) never advertises them."""

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        local = settings.LOCAL_LOGIN
        return {
            **super().get_context_data(**kwargs),
            "demo_logins": bool(settings.DEBUG) and local == "true",
            "password_form": settings.LDAP_ENABLED or local != "false",
            "oidc_provider": (getattr(settings, "OIDC_PROVIDER_NAME", "") or "single sign-on")
            if settings.OIDC_ISSUER
            else "",
        }
