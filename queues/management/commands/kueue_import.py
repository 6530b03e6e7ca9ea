"""``manage.py kueue_import FILE [--dry-run] [--json] [--skip-unsupported] [--namespace NS]``: Kueue
manifests into fairportal.

Prints what was (or, with --dry-run, would be) created, updated and left unchanged, with each
changed field as ``before -> after``. Bad input prints one line per problem (document, kind,
name, field) to stderr and exits with status 2; nothing is saved.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from core.models import Surface
from queues.interop.kueue.apply import import_manifests
from queues.interop.kueue.report import ImportFailed

EXIT_BAD_INPUT = 2


class Command(BaseCommand):
    help = "Import Kueue manifests (kueue.x-k8s.io v1beta1/v1beta2, multi-document YAML; '-' reads stdin)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="YAML file with Kueue manifests, or - for standard input")
        parser.add_argument("--dry-run", action="store_true", help="show the changes without saving anything")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument(
            "--skip-unsupported",
            action="store_true",
            help="skip (and list) documents of kinds fairportal does not model: Topology, AdmissionCheck, "
            "MultiKueue*, ProvisioningRequestConfig, Namespace, Deployment, ...",
        )
        parser.add_argument(
            "-n",
            "--namespace",
            help="namespace of LocalQueues without metadata.namespace (as kubectl apply -n)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        text = self._read(options["file"])
        try:
            report = import_manifests(
                text,
                dry_run=options["dry_run"],
                surface=Surface.CLI,
                skip_unsupported=options["skip_unsupported"],
                namespace=options["namespace"] or None,
            )
        except ImportFailed as failure:
            if options["json"]:
                self.stdout.write(json.dumps(failure.report.as_dict(), indent=2))
            for problem in failure.report.problems:
                self.stderr.write(f"error: {problem}")
            self.stderr.write(f"nothing imported: {len(failure.report.problems)} problem(s)")
            sys.exit(EXIT_BAD_INPUT)
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), indent=2))
        else:
            for line in report.lines():
                self.stdout.write(line)

    def _read(self, name: str) -> str:
        if name == "-":
            return sys.stdin.read()
        try:
            return Path(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            self.stderr.write(f"error: {name}: cannot be read: {error}")
            sys.exit(EXIT_BAD_INPUT)
