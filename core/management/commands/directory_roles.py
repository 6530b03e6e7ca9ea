"""``manage.py directory_roles [GROUP ...]``: how sign-in is configured and what ``DIRECTORY_GROUP_MAP``
grants for the given directory groups (without signing anyone in). Checks a mapping before a
site relies on it: namespaces the mapping names that do not exist are listed."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from core.directory_map import roles_for
from core.models import TenantMembership


class Command(BaseCommand):
    help = "Show the sign-in configuration and what DIRECTORY_GROUP_MAP grants to the given groups."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("groups", nargs="*", help="directory groups (LDAP group DNs or OIDC group names)")

    def handle(self, *args: Any, **options: Any) -> None:
        mapping = settings.DIRECTORY_GROUP_MAP
        write = self.stdout.write
        write(f"LDAP: {getattr(settings, 'AUTH_LDAP_SERVER_URI', '') if settings.LDAP_ENABLED else 'off'}")
        write(f"OpenID Connect: {settings.OIDC_ISSUER or 'off'}")
        write(f"LOCAL_LOGIN: {settings.LOCAL_LOGIN}")
        namespace_model = TenantMembership._meta.get_field("namespace").related_model
        assert not isinstance(namespace_model, str)
        named = {grant.namespace for grants in mapping.values() for grant in grants if grant.namespace}
        existing = set(namespace_model._default_manager.filter(name__in=named).values_list("name", flat=True))
        write(f"DIRECTORY_GROUP_MAP: {len(mapping)} group(s)")
        for group, grants in sorted(mapping.items()):
            write(f"  {group} = {', '.join(str(grant) for grant in grants)}")
        for name in sorted(named - existing):
            write(f"  unknown namespace (skipped at sign-in): {name}")
        if options["groups"]:
            roles = roles_for(options["groups"], mapping)
            namespaces = {name: role for name, role in roles.namespaces.items() if name in existing}
            write("These groups grant:")
            write(f"  admin: {'yes' if roles.admin else 'no'}")
            write(f"  executor: {'yes' if roles.executor else 'no'}")
            write(f"  namespaces: {', '.join(f'{n}:{r}' for n, r in sorted(namespaces.items())) or 'none'}")
