"""The mapping from the site's directory groups to fairportal's roles (``DIRECTORY_GROUP_MAP``).

Pure: parsed when the settings load (a bad mapping stops the start), used by ``core.directory``
at each LDAP or OpenID Connect sign-in. Two spellings:

- JSON: ``{"cn=hpc-physics,ou=groups,dc=example,dc=org": ["editor:physics"], "hpc-admins": "admin"}``
- text: entries separated by ``;`` or new lines, each ``GROUP=ROLE[:NAMESPACE]``. The group is
  everything before the LAST ``=`` (an LDAP DN has ``=`` and ``,`` in it; a role never does).

Roles: ``viewer:<namespace>``, ``editor:<namespace>``, ``executor`` (the ``executors`` service
role) and ``admin`` (platform admin: ``is_staff``). Groups are compared case-insensitively.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

NAMESPACE_ROLES = ("viewer", "editor")  # weakest first: a user in two groups gets the stronger
GLOBAL_ROLES = ("executor", "admin")


class GroupMapError(ValueError):
    """A mapping that cannot be read; the message names the entry, never a secret."""


@dataclass(frozen=True)
class Grant:
    role: str
    namespace: str | None = None

    def __str__(self) -> str:
        return f"{self.role}:{self.namespace}" if self.namespace else self.role


@dataclass(frozen=True)
class Roles:
    """What a user's groups grant: namespace name -> role, and the two global roles."""

    namespaces: Mapping[str, str] = field(default_factory=dict)
    admin: bool = False
    executor: bool = False


def parse_grant(text: str) -> Grant:
    role, _, namespace = text.strip().partition(":")
    role, namespace = role.strip().lower(), namespace.strip()
    if role in NAMESPACE_ROLES:
        if not namespace:
            raise GroupMapError(f"{text.strip()!r}: {role} needs a namespace ({role}:<namespace>)")
        return Grant(role, namespace)
    if role in GLOBAL_ROLES:
        if namespace:
            raise GroupMapError(f"{text.strip()!r}: {role} is platform-wide and takes no namespace")
        return Grant(role)
    raise GroupMapError(f"{text.strip()!r}: unknown role {role!r} (viewer:NS, editor:NS, executor or admin)")


def parse_group_map(text: str) -> dict[str, tuple[Grant, ...]]:
    """``DIRECTORY_GROUP_MAP`` (JSON or the text form) as lower-cased group -> grants."""
    text = text.strip()
    mapping: dict[str, list[Grant]] = {}
    if not text:
        return {}
    if text.startswith(("{", "[")):
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as error:
            raise GroupMapError(f"not valid JSON: {error.msg} at line {error.lineno}") from None
        if not isinstance(loaded, dict):
            raise GroupMapError("expected a JSON object of group -> role(s)")
        for group, roles in loaded.items():
            if isinstance(roles, str):
                roles = [roles]
            if not isinstance(roles, list) or not all(isinstance(role, str) for role in roles):
                raise GroupMapError(f"{group!r}: expected a role or a list of roles")
            for role in roles:
                _add(mapping, group, role)
    else:
        for entry in text.replace("\n", ";").split(";"):
            if not entry.strip():
                continue
            group, sep, role = entry.rpartition("=")
            if not sep or not group.strip():
                raise GroupMapError(f"{entry.strip()!r}: expected GROUP=ROLE[:NAMESPACE]")
            _add(mapping, group, role)
    return {group: tuple(grants) for group, grants in mapping.items()}


def _add(mapping: dict[str, list[Grant]], group: str, role: str) -> None:
    key = group.strip().lower()
    if not key:
        raise GroupMapError("an empty group name")
    grant = parse_grant(role)
    if grant not in mapping.setdefault(key, []):
        mapping[key].append(grant)


def roles_for(groups: Iterable[str], mapping: Mapping[str, tuple[Grant, ...]]) -> Roles:
    """What ``groups`` (as the directory names them) grant under ``mapping``."""
    namespaces: dict[str, str] = {}
    admin = executor = False
    for group in {group.strip().lower() for group in groups}:
        for grant in mapping.get(group, ()):
            if grant.role == "admin":
                admin = True
            elif grant.role == "executor":
                executor = True
            elif grant.namespace is not None:
                current = namespaces.get(grant.namespace)
                if current is None or NAMESPACE_ROLES.index(grant.role) > NAMESPACE_ROLES.index(current):
                    namespaces[grant.namespace] = grant.role
    return Roles(namespaces=namespaces, admin=admin, executor=executor)
