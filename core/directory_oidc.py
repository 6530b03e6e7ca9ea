"""OpenID Connect sign-in (mozilla-django-oidc): the authorization-code flow with PKCE.

The provider's endpoints come from its discovery document (``OIDC_ISSUER`` +
``/.well-known/openid-configuration``), read at the first sign-in and kept per process. The user
is matched by the ``OIDC_USERNAME_CLAIM`` (``preferred_username``) and their groups are read from
the ``OIDC_GROUPS_CLAIM`` (``groups``) of the userinfo answer or the ID token; ``core.directory``
turns them into roles at every sign-in. Without ``OIDC_ISSUER`` the views answer 404.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import requests
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect
from django.urls import reverse
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.utils import import_from_settings
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from core.directory import apply_directory_groups, is_unclaimed_local_account

logger = logging.getLogger(__name__)

ENDPOINTS = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
}

_discovered: dict[str, dict[str, Any]] = {}
_lock = threading.Lock()


class ProviderUnavailable(Exception):
    """The provider's discovery document could not be read."""


def discovery(issuer: str) -> dict[str, Any]:
    """The issuer's discovery document, fetched once per process (a failure is retried next time)."""
    with _lock:
        if issuer in _discovered:
            return _discovered[issuer]
    url = f"{issuer}/.well-known/openid-configuration"
    try:
        response = requests.get(url, timeout=10, verify=getattr(settings, "OIDC_VERIFY_SSL", True))
        response.raise_for_status()
        document = response.json()
    except (requests.RequestException, ValueError) as error:
        raise ProviderUnavailable(f"{url}: {type(error).__name__}") from None
    if not isinstance(document, dict) or document.get("issuer", "").rstrip("/") != issuer:
        raise ProviderUnavailable(f"{url}: the document names another issuer")
    missing = [key for key in ENDPOINTS.values() if not document.get(key)]
    if missing:
        raise ProviderUnavailable(f"{url}: no {', '.join(missing)}")
    with _lock:
        _discovered[issuer] = document
    return document


def oidc_setting(attr: str, *args: Any) -> Any:
    """mozilla-django-oidc's settings, the OP endpoints from discovery unless set explicitly."""
    if attr in ENDPOINTS and not hasattr(settings, attr):
        return discovery(settings.OIDC_ISSUER)[ENDPOINTS[attr]]
    return import_from_settings(attr, *args)


def _enabled() -> bool:
    return bool(settings.OIDC_ISSUER)


def _provider_name() -> str:
    return str(getattr(settings, "OIDC_PROVIDER_NAME", "") or "single sign-on")


def _claim(name: str, default: str) -> str:
    return str(getattr(settings, name, "") or default)


class DirectoryOIDCBackend(OIDCAuthenticationBackend):
    """Only acts on the provider's callback (a ``code`` and ``state``); for every other sign-in
    (passwords) it answers None without talking to the provider."""

    get_settings = staticmethod(oidc_setting)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from django.contrib.auth import get_user_model

        self.UserModel = get_user_model()
        self._claims: dict[str, Any] = {}

    def authenticate(self, request: Any, **kwargs: Any) -> Any:
        if not _enabled() or request is None or not request.GET.get("code") or not request.GET.get("state"):
            return None
        try:
            for attr in ENDPOINTS:
                setattr(self, attr, self.get_settings(attr))
        except ProviderUnavailable as error:
            logger.warning("OpenID Connect sign-in failed: %s", error)
            return None
        self.OIDC_RP_CLIENT_ID = self.get_settings("OIDC_RP_CLIENT_ID")
        self.OIDC_RP_CLIENT_SECRET = self.get_settings("OIDC_RP_CLIENT_SECRET")
        self.OIDC_RP_SIGN_ALGO = self.get_settings("OIDC_RP_SIGN_ALGO", "RS256")
        self.OIDC_RP_IDP_SIGN_KEY = self.get_settings("OIDC_RP_IDP_SIGN_KEY", None)
        try:
            return super().authenticate(request, **kwargs)
        except requests.RequestException as error:
            logger.warning("OpenID Connect sign-in failed: %s", type(error).__name__)
            return None

    def get_userinfo(self, access_token: str, id_token: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The userinfo answer over the ID token's claims (some providers put groups only there)."""
        userinfo = super().get_userinfo(access_token, id_token, payload)
        self._claims = {**payload, **userinfo}
        return self._claims

    def _username(self, claims: dict[str, Any]) -> str:
        value = claims.get(_claim("OIDC_USERNAME_CLAIM", "preferred_username"))
        return str(value).strip() if value else ""

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        if not self._username(claims):
            logger.warning(
                "OpenID Connect sign-in refused: no %r claim", _claim("OIDC_USERNAME_CLAIM", "preferred_username")
            )
            return False
        return True

    def filter_users_by_claims(self, claims: dict[str, Any]) -> Any:
        """The user of that name, unless it is a local account with a password that no directory
        sign-in has claimed yet: a provider's user never takes over a break-glass account."""
        users = self.UserModel._default_manager.filter(username=self._username(claims))
        if is_unclaimed_local_account(self._username(claims)):
            logger.warning(
                "OpenID Connect sign-in of %s refused: a local account with a password has that name",
                self._username(claims),
            )
            raise SuspiciousOperation("local account with the same name")
        return users

    def describe_user_by_claims(self, claims: dict[str, Any]) -> str:
        return f"username {self._username(claims)}"

    def create_user(self, claims: dict[str, Any]) -> Any:
        user = self.UserModel._default_manager.create_user(self._username(claims), email=claims.get("email") or "")
        return self.update_user(user, claims)

    def update_user(self, user: Any, claims: dict[str, Any]) -> Any:
        changed = []
        for field, claim in (("email", "email"), ("first_name", "given_name"), ("last_name", "family_name")):
            value = claims.get(claim)
            if isinstance(value, str) and value and getattr(user, field) != value[:150]:
                setattr(user, field, value[:150])
                changed.append(field)
        if changed:
            user.save(update_fields=changed)
        return user

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        user = super().get_or_create_user(access_token, id_token, payload)
        if user is not None:
            groups = self._claims.get(_claim("OIDC_GROUPS_CLAIM", "groups")) or []
            if isinstance(groups, str):
                groups = [groups]
            apply_directory_groups(user, [str(group) for group in groups], "oidc")
        return user


class SignInRedirectView(OIDCAuthenticationRequestView):
    """``/oidc/authenticate/``: redirects to the provider (404 without ``OIDC_ISSUER``)."""

    get_settings = staticmethod(oidc_setting)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super(OIDCAuthenticationRequestView, self).__init__(*args, **kwargs)  # the endpoints: at get()

    def get(self, request: HttpRequest) -> HttpResponse:
        if not _enabled():
            raise Http404("OpenID Connect is not configured")
        try:
            self.OIDC_OP_AUTH_ENDPOINT = self.get_settings("OIDC_OP_AUTHORIZATION_ENDPOINT")
        except ProviderUnavailable as error:
            logger.warning("OpenID Connect sign-in unavailable: %s", error)
            messages.error(request, f"{_provider_name()} cannot be reached; try again later.")
            return redirect("login")
        self.OIDC_RP_CLIENT_ID = self.get_settings("OIDC_RP_CLIENT_ID")
        return super().get(request)


class CallbackView(OIDCAuthenticationCallbackView):
    """``/oidc/callback/``: the provider sends the user back here (404 without ``OIDC_ISSUER``)."""

    get_settings = staticmethod(oidc_setting)

    def get(self, request: HttpRequest) -> HttpResponse:
        if not _enabled():
            raise Http404("OpenID Connect is not configured")
        return super().get(request)

    def login_failure(self) -> HttpResponse:
        messages.error(self.request, f"Sign-in with {_provider_name()} failed.")
        return HttpResponseRedirect(reverse("login"))
