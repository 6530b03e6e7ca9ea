"""API tokens (django-rest-knox): only a hash is stored, and each token expires.

The key is shown once, when it is made; ``Authorization: Token <key>`` as before.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from knox.models import AuthToken

_DEFAULT = object()


def issue_token(user: Any, *, ttl: timedelta | None | object = _DEFAULT) -> str:
    """A new key for ``user``, valid for ``ttl`` (``API_TOKEN_TTL`` by default; None: never expires)."""
    if ttl is _DEFAULT:
        _, key = AuthToken.objects.create(user=user)
    else:
        _, key = AuthToken.objects.create(user=user, expiry=ttl)
    return key


def revoke_tokens(user: Any) -> int:
    return AuthToken.objects.filter(user=user).delete()[0]
