"""Sign-in with the site's directory: ONE place where directory groups become roles.

Both directory back ends (``core.directory_ldap`` and ``core.directory_oidc``) call
``apply_directory_groups`` after the directory vouched for the user. At each such sign-in the
user's directory-managed memberships (``TenantMembership.source == "directory"``) are replaced by
what ``DIRECTORY_GROUP_MAP`` grants for the groups the directory names NOW, and ``is_staff`` and
the executor role follow the groups when the directory granted them. Memberships, staff and
executor rights an admin granted by hand are never touched. So a user removed from a group loses
the namespace at their next sign-in.

``LocalBackend`` is the password back end for accounts kept in fairportal's own database,
restricted by ``LOCAL_LOGIN``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone

from core.access import EXECUTORS_GROUP
from core.directory_map import roles_for
from core.models import DirectoryIdentity, TenantMembership

logger = logging.getLogger(__name__)

LOCAL_LOGIN_MODES = ("true", "false", "admins")

_warned_unknown: set[str] = set()


def _warn_unknown_namespace(name: str) -> None:
    """An unknown namespace in the mapping is logged once per process, then skipped."""
    if name not in _warned_unknown:
        _warned_unknown.add(name)
        logger.warning("DIRECTORY_GROUP_MAP names namespace %r, which does not exist: skipped", name)


@transaction.atomic
def apply_directory_groups(user: Any, groups: Iterable[str], source: str) -> None:
    """Replace ``user``'s directory-managed roles by what ``groups`` grant now."""
    group_list = sorted({str(group) for group in groups})
    roles = roles_for(group_list, settings.DIRECTORY_GROUP_MAP)
    namespace_model = TenantMembership._meta.get_field("namespace").related_model
    assert not isinstance(namespace_model, str)
    found = dict(namespace_model._default_manager.filter(name__in=list(roles.namespaces)).values_list("name", "id"))
    for name in roles.namespaces:
        if name not in found:
            _warn_unknown_namespace(name)
    wanted = {found[name]: role for name, role in roles.namespaces.items() if name in found}

    memberships = TenantMembership.objects.filter(user=user)
    list(memberships.select_for_update().values_list("pk", flat=True))  # one sign-in at a time per user
    local = set(memberships.filter(source=TenantMembership.Source.LOCAL).values_list("namespace_id", flat=True))
    current = dict(memberships.filter(source=TenantMembership.Source.DIRECTORY).values_list("namespace_id", "role"))
    gone = [namespace_id for namespace_id in current if namespace_id not in wanted]
    if gone:
        memberships.filter(source=TenantMembership.Source.DIRECTORY, namespace_id__in=gone).delete()
    for namespace_id, role in wanted.items():
        if namespace_id in local:
            continue  # a hand-granted membership on the same namespace wins
        if namespace_id not in current:
            TenantMembership.objects.create(
                user=user, namespace_id=namespace_id, role=role, source=TenantMembership.Source.DIRECTORY
            )
        elif current[namespace_id] != role:
            memberships.filter(namespace_id=namespace_id).update(role=role)

    identity = DirectoryIdentity.objects.select_for_update().filter(user=user).first()
    granted_staff = bool(identity and identity.granted_staff)
    granted_executor = bool(identity and identity.granted_executor)
    # Staff: the directory takes back only what it gave; a hand-made admin stays one.
    if roles.admin and not user.is_staff:
        user.is_staff, granted_staff = True, True
        user.save(update_fields=["is_staff"])
    elif not roles.admin and granted_staff:
        user.is_staff, granted_staff = False, False
        user.save(update_fields=["is_staff"])
    executors, _ = Group.objects.get_or_create(name=EXECUTORS_GROUP)
    is_executor = user.groups.filter(pk=executors.pk).exists()
    if roles.executor and not is_executor:
        user.groups.add(executors)
        granted_executor = True
    elif not roles.executor and granted_executor:
        user.groups.remove(executors)
        granted_executor = False
    DirectoryIdentity.objects.update_or_create(
        user=user,
        defaults={
            "source": source,
            "groups": group_list,
            "granted_staff": granted_staff,
            "granted_executor": granted_executor,
            "synced_at": timezone.now(),
        },
    )
    logger.info(
        "directory sign-in (%s) of %s: %d group(s), namespaces %s, admin=%s, executor=%s",
        source,
        user.get_username(),
        len(group_list),
        ",".join(f"{name}:{role}" for name, role in sorted(roles.namespaces.items()) if name in found) or "-",
        user.is_staff,
        roles.executor or is_executor,
    )


def is_unclaimed_local_account(username: str) -> bool:
    """A local account with a password that no directory sign-in has claimed: the directory's
    user of the same name never takes it over (remove its password to hand it over)."""
    from django.contrib.auth import get_user_model

    user = get_user_model()._default_manager.filter(username=username).first()
    return user is not None and user.has_usable_password() and not DirectoryIdentity.objects.filter(user=user).exists()


def local_login_allowed(user: Any) -> bool:
    """``LOCAL_LOGIN``: ``true`` anyone, ``admins`` staff and superusers only, ``false`` nobody."""
    mode = settings.LOCAL_LOGIN
    if mode == "true":
        return True
    if mode == "admins":
        return bool(user.is_staff or user.is_superuser)
    return False


class LocalBackend(ModelBackend):
    """Django's password back end, restricted by ``LOCAL_LOGIN`` (break-glass admins only, or off,
    once the site's directory signs people in). Sessions and permissions work as ModelBackend's."""

    def authenticate(
        self, request: Any, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> Any:
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None and not local_login_allowed(user):
            logger.info(
                "local password sign-in of %s refused (LOCAL_LOGIN=%s)", user.get_username(), settings.LOCAL_LOGIN
            )
            return None
        return user
