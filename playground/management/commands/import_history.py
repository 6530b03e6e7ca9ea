"""``manage.py import_history FILE [--format sacct|swf] [--from DATE --to DATE] [--mode MODE]
[--layout account|user] [--capacity cpu=N ...] [-o scenario.yaml]``.

Turns a site's real history (``sacct --json`` of Slurm 22.05 to 26.05, or an SWF trace) into a
scenario for ``manage.py simulate`` and the playground (``playground.history``). No database,
no Celery. ``--synthetic`` writes the seeded 43-user SWF trace instead of reading one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from django.core.management.base import BaseCommand, CommandError, CommandParser

from fairshare.errors import ValidationError
from playground import history


class Command(BaseCommand):
    help = "Convert a Slurm sacct --json dump or an SWF trace into a scenario file."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="sacct --json output or an .swf trace ('-' is not read: give a path)")
        parser.add_argument("--format", choices=history.FORMATS, help="default: sacct when the file starts with '{'")
        parser.add_argument("--from", dest="start", help="only jobs submitted at or after (2026-11-01[T08:00:00Z])")
        parser.add_argument("--to", dest="end", help="only jobs submitted before")
        parser.add_argument(
            "--mode",
            default="NoAdmissionFairSharing",
            help="the pool's admission mode (fifo, usage, drs, timeaware or the full name)",
        )
        parser.add_argument(
            "--layout",
            choices=history.LAYOUTS,
            default="account",
            help="account: namespace per account, LocalQueue account/user; user: one LocalQueue per user",
        )
        parser.add_argument(
            "--capacity",
            action="append",
            default=[],
            metavar="cpu=N",
            help="the pool's capacity (repeatable); default the largest concurrent allocation",
        )
        parser.add_argument("--name", default="", help="the scenario's name (default: the file's)")
        parser.add_argument("-o", "--output", help="write the scenario here (default: stdout)")
        parser.add_argument(
            "--synthetic",
            action="store_true",
            help="write the seeded synthetic SWF trace (43 users, 3,200 jobs, 10 days) to FILE and stop",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        if options["synthetic"]:
            path.write_text(history.synthetic_swf(), encoding="utf-8")
            self.stderr.write(f"wrote {path}")
            return
        try:
            size = path.stat().st_size
        except OSError as error:
            raise CommandError(f"{path}: {error.strerror}") from None
        if size > history.MAX_HISTORY_BYTES:
            raise CommandError(
                f"{path}: larger than {history.MAX_HISTORY_BYTES // (1024 * 1024)} MiB; cut it with --starttime/--endtime"
            )
        try:
            content = path.read_bytes()
            fmt = options["format"] or history.guess_format(content)
            parsed = history.read_history(content, fmt)
            document = history.to_scenario(
                parsed,
                name=options["name"] or path.stem,
                layout=options["layout"],
                mode=options["mode"],
                capacity=history.parse_capacity(options["capacity"]) if options["capacity"] else None,
                start=history.parse_date(options["start"], "--from") if options["start"] else None,
                end=history.parse_date(options["end"], "--to") if options["end"] else None,
            )
        except ValidationError as error:
            raise CommandError(str(error)) from None
        text = yaml.safe_dump(document, sort_keys=False, width=200)
        if options["output"]:
            Path(options["output"]).write_text(text, encoding="utf-8")
            self.stderr.write(
                f"{options['output']}: {len(document['workloads']):,} workloads, {len(document['localQueues'])} LocalQueues "
                f"({parsed.skipped} records skipped: never ran)"
            )
        else:
            self.stdout.write(text, ending="")
