"""``manage.py check_usage_counters [--repair]``: compare the usage and workload counters with the rows."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from queues.services import usage_counters

_SHOWN = 20  # differences printed; the count says how many there are


class Command(BaseCommand):
    help = (
        "Recompute the admitted-usage counters from the admitted workloads' resource rows, and the admitted and "
        "pending workload counts per LocalQueue from the workloads, and compare "
        "(exit status 1 on a difference); --repair rewrites them from the rows."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--repair", action="store_true", help="rewrite the counters from the rows")

    def handle(self, *args: Any, **options: Any) -> None:
        differences = usage_counters.check(repair=options["repair"])
        for difference in differences[:_SHOWN]:
            self.stdout.write(difference.describe())
        if not differences:
            self.stdout.write("usage counters match the admitted workloads")
        elif options["repair"]:
            self.stdout.write(f"repaired {len(differences)} counters")
        else:
            raise CommandError(f"{len(differences)} counters differ from the rows; run with --repair to rewrite them")
