"""``manage.py kueue_import FILE [--dry-run] [--json] [--skip-unsupported] [--namespace NS]
[--confirm-disruptive]``: Kueue manifests into fairportal.

Prints what was (or, with --dry-run, would be) created, updated and left unchanged, with each
changed field as ``before -> after``, and every quota deletion and re-parenting with whether
admitted work depends on it. Bad input prints one line per problem (document, kind, name,
field) to stderr and exits with status 2; an import that would delete or re-parent something
admitted work depends on prints one line naming --confirm-disruptive and exits with status 3.
Either way nothing is saved.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from core.models import Surface
from queues.interop.kueue.apply import import_manifests
from queues.interop.kueue.report import ImportFailed, ImportRefused
from queues.interop.kueue.specs import COMMAND_TERMS

EXIT_BAD_INPUT = 2
EXIT_REFUSED = 3


class Command(BaseCommand):
    help = "Import Kueue manifests (kueue.x-k8s.io v1beta1/v1beta2, multi-document YAML; '-' reads stdin)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="YAML file with Kueue manifests, or - for standard input")
        parser.add_argument("--dry-run", action="store_true", help="show the changes without saving anything")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument(
            "--skip-unsupported",
            action="store_true",
            help="skip (and list) documents of kinds fairportal does not model: Topology, an AdmissionCheck or "
            "MultiKueueConfig fairportal did not write, a MultiKueueCluster without fairportal.io/backend (a Kubernetes "
            "worker), ProvisioningRequestConfig, Namespace, Deployment, ...",
        )
        parser.add_argument(
            "-n",
            "--namespace",
            help="namespace of LocalQueues without metadata.namespace (as kubectl apply -n)",
        )
        parser.add_argument(
            "--confirm-disruptive",
            action="store_true",
            help="apply even when the import deletes quota or re-parents a cohort or ClusterQueue that admitted "
            "work depends on (without it such an import is refused; --dry-run lists them)",
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
                confirm_disruptive=options["confirm_disruptive"],
                terms=COMMAND_TERMS,
            )
        except ImportFailed as failure:
            if options["json"]:
                self.stdout.write(json.dumps(failure.report.as_dict(), indent=2))
            for problem in failure.report.problems:
                self.stderr.write(f"error: {problem}")
            self.stderr.write(f"nothing imported: {len(failure.report.problems)} problem(s)")
            sys.exit(EXIT_BAD_INPUT)
        except ImportRefused as refusal:
            if options["json"]:
                self.stdout.write(json.dumps(refusal.report.as_dict(), indent=2))
            else:
                for line in refusal.report.lines():
                    self.stdout.write(line)
            count = len(refusal.report.dependent_disruptions)
            self.stderr.write(
                f"error: refused: {count} deletion(s) or re-parenting(s) that admitted work depends on (listed "
                "above); nothing imported. Pass --confirm-disruptive to apply them"
            )
            sys.exit(EXIT_REFUSED)
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
