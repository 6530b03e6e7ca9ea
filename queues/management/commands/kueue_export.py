"""``manage.py kueue_export [--api-version v1beta1|v1beta2] [-o FILE]``: fairportal as Kueue manifests.

Writes multi-document YAML that ``kueue_import`` reads back unchanged; warnings (for example an
admission mode Kueue itself does not know) go to stderr.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from queues.interop.kueue.export import export_manifests
from queues.interop.kueue.specs import API_VERSIONS, DEFAULT_EXPORT_VERSION


class Command(BaseCommand):
    help = (
        "Export ResourceFlavors, WorkloadPriorityClasses, Cohorts, ClusterQueues and LocalQueues as Kueue YAML, and "
        "the clusters as MultiKueueClusters (with the MultiKueue check of ClusterQueues over several clusters) when "
        "there is more than the default one."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--api-version", choices=API_VERSIONS, default=DEFAULT_EXPORT_VERSION)
        parser.add_argument("-o", "--output", help="write to this file instead of standard output")

    def handle(self, *args: Any, **options: Any) -> None:
        result = export_manifests(options["api_version"])
        text = result.to_yaml()
        if options["output"]:
            Path(options["output"]).write_text(text, encoding="utf-8")
        else:
            self.stdout.write(text, ending="")
        for warning in result.warnings:
            self.stderr.write(f"warning: {warning}")
