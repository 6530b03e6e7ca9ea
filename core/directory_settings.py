"""Sign-in settings read from the environment (fairportal/settings.py applies them).

LDAP (django-auth-ldap, an optional extra: requirements-ldap.txt) is on when ``LDAP_SERVER_URI``
is set; OpenID Connect (mozilla-django-oidc) when ``OIDC_ISSUER`` is set. Secrets come from the
variable or, better, from the file named by ``<NAME>_FILE``; they are never logged.
See docs/sign-in.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from core.directory_map import GroupMapError, parse_group_map


class DirectorySettingsError(ValueError):
    """A sign-in setting that cannot be used; the message names the variable, never its secret."""


def read_secret(env: Mapping[str, str], name: str) -> str:
    """``name`` from the environment, or the content of the file ``<name>_FILE`` names."""
    path = env.get(f"{name}_FILE", "").strip()
    if path:
        try:
            return Path(path).read_text().rstrip("\r\n")
        except OSError as error:
            raise DirectorySettingsError(f"{name}_FILE: cannot read {path}: {error.strerror}") from None
    return env.get(name, "")


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in {"1", "true", "yes", "on"}:
        return True
    if raw in {"0", "false", "no", "off"}:
        return False
    raise DirectorySettingsError(f"{name}={raw!r}: expected true or false")


def _search(env: Mapping[str, str], name: str, default_filter: str) -> tuple[str, str]:
    """``BASE_DN`` or ``BASE_DN?FILTER`` (the filter of an LDAP URL's place)."""
    raw = env.get(name, "").strip()
    base, _, search_filter = raw.partition("?")
    if not base.strip():
        raise DirectorySettingsError(
            f"{name}: expected BASE_DN or BASE_DN?(FILTER), e.g. ou=people,dc=example,dc=org?(uid=%(user)s)"
        )
    search_filter = search_filter.strip() or default_filter
    if not (search_filter.startswith("(") and search_filter.endswith(")")):
        raise DirectorySettingsError(f"{name}: the filter must be in parentheses, got {search_filter!r}")
    return base.strip(), search_filter


GROUP_TYPES = {
    "groupofnames": ("GroupOfNamesType", "(objectClass=groupOfNames)"),
    "nestedgroupofnames": ("NestedGroupOfNamesType", "(objectClass=groupOfNames)"),
    "posixgroup": ("PosixGroupType", "(objectClass=posixGroup)"),
    "activedirectory": ("ActiveDirectoryGroupType", "(objectClass=group)"),
    "nestedactivedirectory": ("NestedActiveDirectoryGroupType", "(objectClass=group)"),
}


def ldap_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The ``AUTH_LDAP_*`` settings, or ``{}`` when ``LDAP_SERVER_URI`` is not set."""
    uri = env.get("LDAP_SERVER_URI", "").strip()
    if not uri:
        return {}
    try:
        import ldap
        from django_auth_ldap import config
    except ImportError:
        raise DirectorySettingsError(
            "LDAP_SERVER_URI is set but django-auth-ldap is not installed: pip install -r requirements-ldap.txt"
        ) from None
    user_base, user_filter = _search(env, "LDAP_USER_SEARCH", "(uid=%(user)s)")
    group_kind = env.get("LDAP_GROUP_TYPE", "groupOfNames").strip().lower()
    if group_kind not in GROUP_TYPES:
        raise DirectorySettingsError(f"LDAP_GROUP_TYPE={group_kind!r}: one of {', '.join(GROUP_TYPES)}")
    type_name, group_filter_default = GROUP_TYPES[group_kind]
    group_base, group_filter = _search(env, "LDAP_GROUP_SEARCH", group_filter_default)
    group_type = getattr(config, type_name)()
    options: dict[int, Any] = {ldap.OPT_NETWORK_TIMEOUT: 10, ldap.OPT_TIMEOUT: 10, ldap.OPT_REFERRALS: 0}
    ca_file = env.get("LDAP_CA_CERT_FILE", "").strip()
    if ca_file:
        if not Path(ca_file).is_file():
            raise DirectorySettingsError(f"LDAP_CA_CERT_FILE: no file {ca_file}")
        # the site's CA for ldaps:// and StartTLS; a new TLS context (last) makes it count
        options.update(
            {
                ldap.OPT_X_TLS_CACERTFILE: ca_file,
                ldap.OPT_X_TLS_REQUIRE_CERT: ldap.OPT_X_TLS_DEMAND,
                ldap.OPT_X_TLS_NEWCTX: 0,
            }
        )
    return {
        "AUTH_LDAP_SERVER_URI": uri,
        "AUTH_LDAP_BIND_DN": env.get("LDAP_BIND_DN", "").strip(),
        "AUTH_LDAP_BIND_PASSWORD": read_secret(env, "LDAP_BIND_PASSWORD"),
        "AUTH_LDAP_START_TLS": _bool(env, "LDAP_START_TLS", False),
        "AUTH_LDAP_USER_SEARCH": config.LDAPSearch(user_base, ldap.SCOPE_SUBTREE, user_filter),
        "AUTH_LDAP_GROUP_SEARCH": config.LDAPSearch(group_base, ldap.SCOPE_SUBTREE, group_filter),
        "AUTH_LDAP_GROUP_TYPE": group_type,
        "AUTH_LDAP_USER_ATTR_MAP": {"first_name": "givenName", "last_name": "sn", "email": "mail"},
        "AUTH_LDAP_ALWAYS_UPDATE_USER": True,
        "AUTH_LDAP_CONNECTION_OPTIONS": options,
    }


def oidc_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The ``OIDC_*`` settings of mozilla-django-oidc; ``OIDC_ISSUER`` empty when off. The
    endpoints are read from the issuer's discovery document at the first sign-in
    (``core.directory_oidc``), never while the settings load."""
    issuer = env.get("OIDC_ISSUER", "").strip().rstrip("/")
    if not issuer:
        return {"OIDC_ISSUER": ""}
    client_id = env.get("OIDC_CLIENT_ID", "").strip()
    secret = read_secret(env, "OIDC_CLIENT_SECRET")
    if not client_id or not secret:
        raise DirectorySettingsError("OIDC_ISSUER is set: OIDC_CLIENT_ID and OIDC_CLIENT_SECRET(_FILE) are required")
    return {
        "OIDC_ISSUER": issuer,
        "OIDC_PROVIDER_NAME": env.get("OIDC_PROVIDER_NAME", "").strip() or urlsplit(issuer).hostname or issuer,
        "OIDC_RP_CLIENT_ID": client_id,
        "OIDC_RP_CLIENT_SECRET": secret,
        "OIDC_RP_SIGN_ALGO": env.get("OIDC_SIGN_ALGO", "RS256").strip(),
        "OIDC_RP_SCOPES": env.get("OIDC_SCOPES", "openid email profile").strip(),
        "OIDC_GROUPS_CLAIM": env.get("OIDC_GROUPS_CLAIM", "groups").strip() or "groups",
        "OIDC_USERNAME_CLAIM": env.get("OIDC_USERNAME_CLAIM", "preferred_username").strip() or "preferred_username",
        "OIDC_USE_PKCE": True,
        "OIDC_TIMEOUT": 10,
        "OIDC_VERIFY_SSL": _bool(env, "OIDC_VERIFY_SSL", True),
    }


def local_login_mode(env: Mapping[str, str], *, directory: bool) -> str:
    """``LOCAL_LOGIN``: true when no directory is configured, ``admins`` (break-glass) when one is."""
    raw = env.get("LOCAL_LOGIN", "").strip().lower()
    if not raw:
        return "admins" if directory else "true"
    if raw in {"1", "yes", "on"}:
        raw = "true"
    elif raw in {"0", "no", "off"}:
        raw = "false"
    if raw not in {"true", "false", "admins"}:
        raise DirectorySettingsError(f"LOCAL_LOGIN={raw!r}: expected true, false or admins")
    if raw == "false" and not directory:
        raise DirectorySettingsError(
            "LOCAL_LOGIN=false but no directory (LDAP_SERVER_URI, OIDC_ISSUER): nobody could sign in"
        )
    return raw


def group_map(env: Mapping[str, str]) -> dict[str, Any]:
    """``DIRECTORY_GROUP_MAP`` (or the file ``DIRECTORY_GROUP_MAP_FILE`` names), parsed."""
    path = env.get("DIRECTORY_GROUP_MAP_FILE", "").strip()
    try:
        text = Path(path).read_text() if path else env.get("DIRECTORY_GROUP_MAP", "")
    except OSError as error:
        raise DirectorySettingsError(f"DIRECTORY_GROUP_MAP_FILE: cannot read {path}: {error.strerror}") from None
    try:
        return parse_group_map(text)
    except GroupMapError as error:
        raise DirectorySettingsError(f"DIRECTORY_GROUP_MAP: {error}") from None


def sign_in_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """Everything sign-in adds to the settings, AUTHENTICATION_BACKENDS included."""
    ldap_conf = ldap_settings(env)
    oidc_conf = oidc_settings(env)
    backends = ["axes.backends.AxesStandaloneBackend"]
    if ldap_conf:
        backends.append("core.directory_ldap.DirectoryLDAPBackend")
    if oidc_conf["OIDC_ISSUER"]:
        backends.append("core.directory_oidc.DirectoryOIDCBackend")
    backends.append("core.directory.LocalBackend")
    directory = bool(ldap_conf) or bool(oidc_conf["OIDC_ISSUER"])
    return {
        **ldap_conf,
        **oidc_conf,
        "LDAP_ENABLED": bool(ldap_conf),
        "LOCAL_LOGIN": local_login_mode(env, directory=directory),
        "DIRECTORY_GROUP_MAP": group_map(env),
        "AUTHENTICATION_BACKENDS": backends,
    }
