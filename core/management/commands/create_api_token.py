"""``manage.py create_api_token USER [--ttl 30d] [--reset]``: print a new API key for a user."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.api_tokens import issue_token, revoke_tokens
from fairshare.durations import parse_duration
from fairshare.errors import ValidationError


class Command(BaseCommand):
    help = "Print a new API token for a user (stored hashed: shown only now). Send it as 'Authorization: Token <key>'."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--ttl", help="lifetime such as 30d or 12h (default: API_TOKEN_TTL); 0s: never expires")
        parser.add_argument("--reset", action="store_true", help="revoke the user's other tokens first")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"no user named {options['username']!r}")
        kwargs: dict[str, Any] = {}
        if options["ttl"] is not None:
            try:
                seconds = parse_duration(options["ttl"], "--ttl")
            except ValidationError as error:
                raise CommandError(str(error)) from None
            kwargs["ttl"] = timedelta(seconds=seconds) if seconds else None
        if options["reset"]:
            revoke_tokens(user)
        key = issue_token(user, **kwargs)
        self.stdout.write(f"Generated token {key} for user {user.username}")
