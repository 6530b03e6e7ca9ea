"""``manage.py simulate FILE [--format json|table] [--set path=value ...]`` (engine only).

A thin wrapper: the engine's ``cli.main`` parses, validates, simulates and prints; no
database and no Celery are touched. Bad input: one line on stderr and exit status 2.
"""

import sys
from typing import Any

from django.core.management.base import BaseCommand

from fairshare.simulation import cli


class Command(BaseCommand):
    help = "Replay a scenario file on the fair-share engine and print events, series and a summary."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def run_from_argv(self, argv: list[str]) -> None:
        """Hand every argument to the engine's parser, so both entry points behave the same."""
        status = cli.main(argv[2:], stdout=sys.stdout, stderr=sys.stderr)
        sys.exit(status)

    def handle(self, *args: Any, **options: Any) -> None:  # used by call_command
        status = cli.main(list(args), stdout=self.stdout._out, stderr=self.stderr._out)  # type: ignore[arg-type]  # OutputWrapper._out is the wrapped stream
        if status:
            sys.exit(status)
