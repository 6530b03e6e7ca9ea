"""LDAP / FreeIPA / Active Directory sign-in (django-auth-ldap, from requirements-ldap.txt).

django-auth-ldap checks the password with a bind as the user and reads their groups
(``AUTH_LDAP_GROUP_SEARCH``/``AUTH_LDAP_GROUP_TYPE``); ``core.directory`` turns the group DNs
into roles at every sign-in. Loaded only when ``LDAP_SERVER_URI`` is set.
"""

from __future__ import annotations

import logging
from typing import Any

from django_auth_ldap.backend import LDAPBackend

from core.directory import apply_directory_groups, is_unclaimed_local_account

logger = logging.getLogger(__name__)


class DirectoryLDAPBackend(LDAPBackend):
    def authenticate_ldap_user(self, ldap_user: Any, password: str) -> Any:
        if is_unclaimed_local_account(ldap_user._username):
            logger.warning(
                "LDAP sign-in of %s refused: a local account with a password has that name", ldap_user._username
            )
            return None
        user = super().authenticate_ldap_user(ldap_user, password)
        if user is not None:
            apply_directory_groups(user, ldap_user.group_dns, "ldap")
        return user
