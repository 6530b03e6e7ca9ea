"""Where ``SECRET_KEY`` comes from, and which keys a ``DEBUG=false`` server refuses.

Sessions, password-reset links and CSRF tokens are signed with it: a key that is short, or known
from a public place (this project's development key, Django's ``django-insecure-`` keys, the
placeholders people paste from tutorials), lets anyone forge them. Read from ``SECRET_KEY`` or
from the file named by ``SECRET_KEY_FILE`` (``make run`` writes ``var/secret_key`` once).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

DEVELOPMENT_KEY = "dev-only-insecure-key-change-me"  # noqa: S105 - DEBUG only, refused otherwise
MIN_LENGTH = 50  # Django's own deploy check (security.W009)
MIN_UNIQUE_CHARACTERS = 5
PUBLISHED_KEYS = frozenset(
    {
        DEVELOPMENT_KEY,
        "changeme",
        "change-me",
        "secret",
        "secret-key",
        "your-secret-key",
        "your-secret-key-here",
        "replace-me",
        "notsecret",
        "insecure",
    }
)
GENERATE_HINT = "generate one with: python -c 'import secrets; print(secrets.token_urlsafe(64))'"


class SecretKeyError(ValueError):
    """The key cannot be used; the message is one line naming the variable."""


def weakness(key: str) -> str | None:
    """Why ``key`` must not sign anything in production, or None when it is acceptable."""
    normalised = key.strip().lower()
    if normalised in PUBLISHED_KEYS or normalised.startswith("django-insecure-"):
        return "is a published example or development key"
    if len(key) < MIN_LENGTH:
        return f"is {len(key)} characters long; use at least {MIN_LENGTH}"
    if len(set(key)) < MIN_UNIQUE_CHARACTERS:
        return f"uses fewer than {MIN_UNIQUE_CHARACTERS} different characters"
    return None


def read_secret_key(environ: Mapping[str, str], *, debug: bool) -> str:
    """The key to use; raises ``SecretKeyError`` when a non-DEBUG server has none or a weak one."""
    key = environ.get("SECRET_KEY", "")
    source = "SECRET_KEY"
    path = environ.get("SECRET_KEY_FILE", "").strip()
    if not key and path:
        source = f"SECRET_KEY_FILE={path}"
        try:
            key = Path(path).read_text(encoding="utf-8").strip()
        except OSError as error:
            raise SecretKeyError(f"{source}: cannot be read ({error.strerror or error})") from None
    if debug:
        return key or DEVELOPMENT_KEY
    if not key:
        raise SecretKeyError(f"SECRET_KEY (or SECRET_KEY_FILE) must be set when DEBUG is false; {GENERATE_HINT}")
    problem = weakness(key)
    if problem:
        raise SecretKeyError(f"{source}: the key {problem}; {GENERATE_HINT}")
    return key
